"""biLM files by URL: a local HTTP server on 127.0.0.1 serves the bilm-tf fixture; a run
trains and the embed command embeds from its URLs, the second use reads the cache without a request,
a changed cached file or a download that does not match its pinned hash is refused, and an address
that does not answer is one error line."""

import functools
import http.server
import json
import socket
import threading

import h5py
import pytest
from conftest import SAMPLES
from run_configs import compose_cfg

from elmo_core.embed import main as embed_main
from experiments import runner
from experiments.run_config import as_run
from suite_common.errors import WeightsError
from suite_common.remote_files import PRESETS, local_path


@pytest.fixture
def server(bilm_tf, tmp_path, monkeypatch):
    """(base URL, list of requested paths): the fixture directory on an ephemeral port of 127.0.0.1."""
    monkeypatch.setenv("ELMO_SUITE_CACHE", str(tmp_path / "suite_cache"))
    requests = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            requests.append(self.path)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(bilm_tf)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", requests
    httpd.shutdown()
    httpd.server_close()


def test_a_run_trains_and_the_embed_command_embeds_from_urls_downloading_once(server, tmp_path):
    base, requests = server
    urls = [f"encoder.options={base}/options.json", f"encoder.weights={base}/lm_weights.hdf5"]
    cfg = compose_cfg(
        [
            "task=ner",
            f"data.dir={SAMPLES['ner']}",
            "data.train_file=ner_tiny.conll",
            "data.dev_file=ner_tiny.conll",
            *urls,
            "encoder.allow_extra_weights=true",
            f"cache.dir={tmp_path / 'cache'}",
            "elmo.position=input",
            "trainer.max_epochs=1",
            "trainer.min_updates=0",
            "task.model.hidden=[4]",
            "task.model.char_filters=2",
            "task.model.word_dim=4",
        ]
    )
    (tmp_path / "run").mkdir()
    record = runner.train(as_run(cfg), tmp_path / "run")
    assert record["dev"]["f1"] >= 0 and len(requests) == 2  # the two files, once each
    assert record["bilm"]["weights"].startswith(str(tmp_path / "suite_cache" / "remote"))
    (tmp_path / "s.txt").write_text("the cat sat .\nhello\n")
    embed_main(
        [
            "--options",
            f"{base}/options.json",
            "--weights",
            f"{base}/lm_weights.hdf5",
            "--allow-extra-weights",
            "--input",
            str(tmp_path / "s.txt"),
            "--output",
            str(tmp_path / "e.hdf5"),
            "--no-progress",
        ]
    )
    assert len(requests) == 2  # the second use read the cache
    with h5py.File(tmp_path / "e.hdf5") as f:
        assert f["0"].shape[:2] == (3, 4) and json.loads(f["sentence_to_index"][0])["hello"] == "1"


def test_a_changed_cached_file_and_a_mismatched_pin_are_refused(server):
    base, requests = server
    cached = local_path(f"{base}/options.json", progress=False)
    cached.write_text(cached.read_text().replace("}", " }", 1))
    with pytest.raises(WeightsError, match="fails its checksum; delete it to download again"):
        local_path(f"{base}/options.json", progress=False)
    with pytest.raises(WeightsError, match="not the pinned"):
        local_path(f"{base}/vocab_test.txt#sha256={'0' * 64}", progress=False)
    assert not list(cached.parent.glob("*vocab_test.txt"))  # nothing kept
    assert set(PRESETS) >= {"elmo-original", "elmo-small"}


def test_an_address_that_does_not_answer_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("ELMO_SUITE_CACHE", str(tmp_path))
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(
        WeightsError,
        match=rf"http://127.0.0.1:{port}/w.hdf5: cannot download .*the published biLMs are only on the network .*"
        r"pass local files: encoder.options=FILE encoder.weights=FILE",
    ):
        local_path(f"http://127.0.0.1:{port}/w.hdf5", progress=False)


@pytest.fixture
def cutting_server(bilm_tf, tmp_path, monkeypatch):
    """A server that sends half of lm_weights.hdf5 and closes the connection: with the full
    ``Content-Length`` (``/with-length/...``) or with none (``/no-length/...``)."""
    monkeypatch.setenv("ELMO_SUITE_CACHE", str(tmp_path / "suite_cache"))
    data = (bilm_tf / "lm_weights.hdf5").read_bytes()
    requests = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            requests.append(self.path)
            self.send_response(200)
            if self.path.startswith("/with-length/"):
                self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.close_connection = True

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", requests
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("how", ["with-length", "no-length"])
def test_a_download_cut_short_is_not_kept_and_a_retry_downloads_again(cutting_server, tmp_path, how):
    base, requests = cutting_server
    url = f"{base}/{how}/lm_weights.hdf5"
    expected = "stopped after .* of .* bytes" if how == "with-length" else "not a readable HDF5 file"
    for attempt in (1, 2):
        with pytest.raises(WeightsError, match=rf"{expected}.*nothing was kept, try again"):
            local_path(url, progress=False)
        assert len(requests) == attempt  # the retry asked the server again
    assert not [p for p in (tmp_path / "suite_cache" / "remote").iterdir() if not p.name.startswith(".")]


def test_a_wrong_pin_on_a_cached_url_blames_the_pin(server):
    base, _ = server
    local_path(f"{base}/options.json", progress=False)
    with pytest.raises(WeightsError, match=r"the pin does not match the file at that address .*correct the pin"):
        local_path(f"{base}/options.json#sha256={'0' * 64}", progress=False)


def test_the_embed_command_names_its_own_flags_when_a_download_fails(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ELMO_SUITE_CACHE", str(tmp_path))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (tmp_path / "s.txt").write_text("hello\n")
    with pytest.raises(SystemExit) as stopped:
        embed_main(["--options", f"http://127.0.0.1:{port}/o.json", "--weights", f"http://127.0.0.1:{port}/w.hdf5",
                    "--input", str(tmp_path / "s.txt"), "--output", str(tmp_path / "e.hdf5")])  # fmt: skip
    message = str(stopped.value) + capsys.readouterr().err
    assert "--options FILE --weights FILE" in message and "encoder.options" not in message


def test_the_pinned_url_composes_as_the_docs_show_it():
    """docs/bilm.md types the pin with Hydra quoting; the composed value keeps the whole fragment."""
    from conftest import REPO

    docs = (REPO / "docs" / "bilm.md").read_text()
    assert "may be `http://` or `https://` URLs" in " ".join(docs.split())  # both served (the tests' server: http)
    typed = next(line.strip() for line in docs.splitlines() if "#sha256=" in line and "encoder.weights=" in line)
    override = next(w for w in typed.split() if "encoder.weights=" in w).strip("`'")
    cfg = compose_cfg(["task=ner", override])
    assert cfg.encoder.weights.startswith("https://") and cfg.encoder.weights.endswith("#sha256=<hex>")


@pytest.fixture
def odd_server(tmp_path, monkeypatch):
    """A server with an endless body and no ``Content-Length`` (``/endless``), and an HTML page under an
    extension-less name (``/model``), both with status 200."""
    monkeypatch.setenv("ELMO_SUITE_CACHE", str(tmp_path / "suite_cache"))

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            self.send_response(200)
            self.end_headers()
            try:
                if self.path == "/endless":
                    while True:
                        self.wfile.write(b"\0" * 65536)
                self.wfile.write(b"<!DOCTYPE html><html><body>Please log in</body></html>")
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _kept(tmp_path):
    remote = tmp_path / "suite_cache" / "remote"
    return [p.name for p in remote.iterdir()] if remote.exists() else []


def test_an_endless_download_stops_at_its_cap_and_keeps_nothing(odd_server, tmp_path, monkeypatch):
    monkeypatch.setenv("ELMO_SUITE_MAX_DOWNLOAD_GB", "0.001")  # 1 MB
    with pytest.raises(WeightsError, match=r"more than 1,000,000 bytes arrived .*nothing was kept"):
        local_path(f"{odd_server}/endless", progress=False)
    assert _kept(tmp_path) == []


def test_an_html_page_under_a_name_without_extension_is_not_cached(odd_server, tmp_path):
    with pytest.raises(WeightsError, match="an HTML page, not the file"):
        local_path(f"{odd_server}/model", progress=False)
    assert _kept(tmp_path) == []


def test_a_full_disk_says_disk_full_not_the_network(server, tmp_path, monkeypatch):
    import builtins
    import errno

    base, _ = server
    real_open = builtins.open

    class FullFile:
        def __init__(self, f):
            self.f = f

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    def open_full(path, mode="r", *args, **kwargs):
        f = real_open(path, mode, *args, **kwargs)
        return FullFile(f) if "w" in mode and ".tmp-" in str(path) else f

    monkeypatch.setattr(builtins, "open", open_full)
    with pytest.raises(WeightsError, match=r"disk full writing .*nothing was kept") as refused:
        local_path(f"{base}/options.json", progress=False)
    assert "network" not in str(refused.value)
