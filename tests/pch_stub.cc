// The program that owns the test programs' shared precompiled header (tests/CMakeLists.txt,
// DLIO_TEST_PCH): compiling it builds the header once; it is never run.
int main() { return 0; }
