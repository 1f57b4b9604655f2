"""Speech-style loading with the standard library's wave module (as torchaudio-free recipes do):
each sample opens a 16-bit mono WAV file, reads its header with wave.open, seeks to a random
frame (setpos) and reads a 1-second crop (readframes); 160 files of 2-4 s at 16 kHz, 2 DataLoader
workers, shuffle, batch 8, 2 epochs, a 4 ms step.

  wav_crops.py make DIR   writes DIR/wavs/utt_<i>.wav
  wav_crops.py run DIR    trains over them
"""
import os
import sys
import time
import wave

import numpy as np

N, RATE, CROP = 160, 16000, 16000


def path(data, i):
    return os.path.join(data, 'wavs', 'utt_%04d.wav' % i)


def make(data):
    os.makedirs(os.path.join(data, 'wavs'), exist_ok=True)
    rng = np.random.default_rng(5)
    for i in range(N):
        frames = int(rng.integers(2 * RATE, 4 * RATE))
        with wave.open(path(data, i), 'wb') as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(RATE)
            w.writeframes(rng.integers(-3000, 3000, frames, dtype=np.int16).tobytes())


def run(data):
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Utterances(Dataset):
        def __len__(self):
            return N

        def __getitem__(self, i):
            with wave.open(path(data, i), 'rb') as w:
                start = int(np.random.randint(0, w.getnframes() - CROP))
                w.setpos(start)
                pcm = np.frombuffer(w.readframes(CROP), dtype=np.int16)
            return torch.from_numpy(pcm.astype(np.float32) / 32768.0), i % 10

    torch.manual_seed(0)
    loader = DataLoader(Utterances(), batch_size=8, shuffle=True, num_workers=2)
    for _ in range(2):
        for x, y in loader:
            time.sleep(0.004)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
