dlio_add_test(sampler_test LIBS dlio_sampler SOURCES sampler/sampler_test.cc)
