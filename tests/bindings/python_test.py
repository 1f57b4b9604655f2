"""The dlio Python package over libdlio_c.so: generate a tiny npz dataset, read it with the loader
(numpy views, memoryviews, copies, two ranks), run the workload, and check that errors raise with
the key or file named. Run by ctest with Debian's python3, DLIO_C_LIBRARY and PYTHONPATH set."""

import json
import os
import shutil
import tempfile
import threading
import unittest

import dlio

FILES, PER_FILE, RECORD, BATCH = 4, 3, 1024, 2

try:
    import numpy
except ImportError:
    numpy = None


def tiny_config(root):
    cfg = dlio.Config(workload="default")
    cfg.set("dataset.data_folder", os.path.join(root, "data"))
    cfg.set("output.folder", os.path.join(root, "out"))
    cfg.set("checkpoint.checkpoint_folder", os.path.join(root, "out", "checkpoints"))
    cfg.set("dataset.num_files_train", FILES)
    cfg.set("dataset.num_samples_per_file", PER_FILE)
    cfg.set("dataset.record_length_bytes", RECORD)
    cfg.set("reader.batch_size", BATCH)
    cfg.set("reader.read_threads", 2)
    cfg.set("train.computation_time", {"mean": 0.001})
    cfg.set("workflow.checkpoint", False)
    cfg.set("++workload.train.epochs=2")
    return cfg


class LoaderTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="dlio-python-test-")
        cls.cfg = tiny_config(cls.root)
        dlio.generate(cls.cfg)

    @classmethod
    def tearDownClass(cls):
        cls.cfg.close()
        shutil.rmtree(cls.root)

    def read_epochs(self, loader, epochs, **kwargs):
        seen = []
        total = 0
        for e in range(epochs):
            refs = []
            for i, batch in enumerate(loader.epoch(e, **kwargs)):
                self.assertEqual(batch.index, i)
                self.assertEqual(batch.epoch, e)
                self.assertEqual(len(batch), BATCH)
                self.assertEqual(batch.bytes, BATCH * RECORD)
                for sample in batch:
                    self.assertEqual(len(sample), RECORD)
                    total += len(sample)
                refs.extend(batch.refs)
                loader.compute(i)
            seen.append(refs)
        return seen, total

    def test_every_sample_once_per_epoch(self):
        with dlio.Loader(self.cfg) as loader:
            self.assertEqual(loader.num_files, FILES)
            self.assertTrue(loader.file_path(0).endswith("/data/train/img_0_of_4.npz"))
            seen, total = self.read_epochs(loader, 2)
            everything = sorted((f, i) for f in range(FILES) for i in range(PER_FILE))
            for refs in seen:
                self.assertEqual(sorted(refs), everything)
            self.assertNotEqual(seen[0], seen[1])  # shuffled with a new seed each epoch
            self.assertEqual(total, 2 * FILES * PER_FILE * RECORD)
            stats = loader.stats()
            self.assertEqual(stats["epochs"], 2)
            self.assertEqual(stats["samples"], 2 * FILES * PER_FILE)
            self.assertEqual(stats["bytes"], total)
            self.assertEqual(stats["batches"], 2 * FILES * PER_FILE // BATCH)
            self.assertGreaterEqual(stats["read_bytes"], total)
            self.assertGreater(stats["compute_s"], 0)
            self.assertGreaterEqual(stats["wait_s"], 0)

    def test_sample_bytes_match_the_npz_files(self):
        if numpy is None:
            self.skipTest("numpy is not importable")
        with dlio.Loader(self.cfg) as loader:
            for batch in loader.epoch(0):
                for sample, (f, i) in zip(batch, batch.refs):
                    self.assertIsInstance(sample, numpy.ndarray)
                    with numpy.load(loader.file_path(f)) as npz:
                        expected = npz["x"]
                    self.assertEqual(bytes(sample), expected[i].tobytes())

    def test_memoryviews_are_released_when_the_loop_moves_on(self):
        with dlio.Loader(self.cfg) as loader:
            kept = None
            for batch in loader.epoch(0, numpy=False):
                self.assertIsInstance(batch[0], memoryview)
                self.assertEqual(batch[0].nbytes, RECORD)
                if kept is None:
                    kept = batch[0]
            with self.assertRaises(ValueError):
                bytes(kept)

    def test_copies_outlive_the_loader(self):
        with dlio.Loader(self.cfg) as loader:
            copies = [s for batch in loader.epoch(0, copy=True) for s in batch]
        self.assertEqual(len(copies), FILES * PER_FILE)
        self.assertTrue(all(len(bytes(c)) == RECORD for c in copies))

    def test_ranks_share_the_dataset(self):
        refs = []
        for rank in range(2):
            with dlio.Loader(self.cfg, rank=rank, world=2) as loader:
                self.assertEqual(loader.start_epoch(0), FILES * PER_FILE // 2 // BATCH)
                while True:
                    batch = loader.next()
                    if batch is None:
                        break
                    refs.extend(batch.refs)
        self.assertEqual(sorted(refs), sorted((f, i) for f in range(FILES) for i in range(PER_FILE)))

    def test_stop_from_another_thread(self):
        with dlio.Loader(self.cfg) as loader:
            loader.start_epoch(0)
            t = threading.Thread(target=loader.stop)
            t.start()
            t.join()
            with self.assertRaises(dlio.CancelledError):
                loader.next()

    def test_breaking_out_of_an_epoch(self):
        with dlio.Loader(self.cfg) as loader:
            for e in range(3):
                for batch in loader.epoch(e):
                    break
            self.assertEqual(loader.stats()["batches"], 3)

    def test_missing_dataset_names_the_file(self):
        with tiny_config(self.root) as cfg:
            missing = os.path.join(self.root, "missing")
            cfg.set("dataset.data_folder", missing)
            # The loader lists the folder when it is made (as the Python DLIO does), so the error
            # comes then, naming the folder and the key.
            with self.assertRaises(dlio.Error) as caught:
                with dlio.Loader(cfg) as loader:
                    for _ in loader.epoch(0):
                        pass
            self.assertIn(missing, caught.exception.message)
            self.assertIn("dataset.num_files_train", caught.exception.message)
            self.assertEqual(caught.exception.code_name, "NotFound")


class RunTest(unittest.TestCase):
    def test_run_returns_the_summary(self):
        root = tempfile.mkdtemp(prefix="dlio-python-run-")
        try:
            with tiny_config(root) as cfg:
                cfg.set("workflow.generate_data", True)
                summary = dlio.run(cfg, os.path.join(root, "run"))
            metric = summary["metric"]
            for key in ("train_au_percentage", "train_au_mean_percentage",
                        "train_throughput_samples_per_second", "train_io_mean_MB_per_second"):
                self.assertIn(key, metric)
            self.assertEqual(len(metric["train_au_percentage"]), 2)
            with open(os.path.join(root, "run", "summary.json")) as f:
                self.assertEqual(json.load(f), summary)
            self.assertTrue(os.path.exists(os.path.join(root, "run", "config.json")))
            self.assertTrue(os.path.exists(os.path.join(root, "run", "dlio.log")))
        finally:
            shutil.rmtree(root)


class ConfigTest(unittest.TestCase):
    def test_set_and_to_dict(self):
        cfg = dlio.Config()
        cfg.set("dataset.num_files_train", 8).set("reader.sample_shuffle", "seed")
        cfg.set("++workload.train.epochs=5")
        d = cfg.to_dict()
        self.assertEqual(d["dataset"]["num_files_train"], 8)
        self.assertEqual(d["reader"]["sample_shuffle"], "seed")
        self.assertEqual(d["train"]["epochs"], 5)

    def test_from_text(self):
        cfg = dlio.Config.from_text("dataset:\n  format: npy\n  num_files_train: 3\n")
        self.assertEqual(cfg.to_dict()["dataset"]["format"], "npy")
        self.assertEqual(cfg.to_dict()["dataset"]["num_files_train"], 3)

    def test_image_records_are_uint8_pixels(self):
        # DLIO's png: record_dims [16, 16] of float32 are 256 bytes of uint8 pixels, as the
        # format declares and a run's config.json says.
        cfg = dlio.Config.from_text(
            "dataset: {format: png, record_dims: [16, 16], record_element_type: float32}\n")
        self.assertEqual(cfg.to_dict()["dataset"]["record_length_bytes"], 256)
        cfg.set("dataset.format", "npy")
        self.assertEqual(cfg.to_dict()["dataset"]["record_length_bytes"], 1024)

    def test_unknown_key_raises_naming_it(self):
        cfg = dlio.Config()
        with self.assertRaises(dlio.InvalidArgumentError) as caught:
            cfg.set("dataset.num_files_trian", 8)
        self.assertIn("dataset.num_files_trian", str(caught.exception))
        self.assertEqual(caught.exception.code, 1)
        self.assertEqual(caught.exception.code_name, "InvalidArgument")

    def test_bad_value_raises_naming_the_key(self):
        with self.assertRaises(dlio.InvalidArgumentError) as caught:
            dlio.Config().set("reader.batch_size", "many")
        self.assertIn("reader.batch_size", caught.exception.message)

    def test_missing_file_raises(self):
        with self.assertRaises(dlio.NotFoundError) as caught:
            dlio.Config(path="/nonexistent/dlio.yaml")
        self.assertIn("/nonexistent/dlio.yaml", caught.exception.message)
        with self.assertRaises(dlio.NotFoundError):
            dlio.Config(workload="no_such_workload")

    def test_generate_refuses_a_foreign_folder(self):
        root = tempfile.mkdtemp(prefix="dlio-python-foreign-")
        try:
            os.makedirs(os.path.join(root, "data"))
            with open(os.path.join(root, "data", "precious.txt"), "w") as f:
                f.write("not dlio's")
            with tiny_config(root) as cfg:
                with self.assertRaises(dlio.AlreadyExistsError):
                    dlio.generate(cfg)
                dlio.generate(cfg, force=True)
            with open(os.path.join(root, "data", "precious.txt")) as f:
                self.assertEqual(f.read(), "not dlio's")
        finally:
            shutil.rmtree(root)

    def test_closed_handles_raise(self):
        cfg = dlio.Config()
        cfg.close()
        with self.assertRaises(dlio.FailedPreconditionError):
            cfg.to_dict()

    def test_version(self):
        self.assertRegex(dlio.version(), r"^\d+\.\d+\.\d+")


if __name__ == "__main__":
    unittest.main()
