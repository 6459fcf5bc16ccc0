package app

import (
	"cmp"

	"github.com/massgen/massgen/internal/agent/toolless"
	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/provider"
)

// workflowActions puts an agent's model behind the seam that asks a model
// without tool calling for its workflow actions another way (backend key
// workflow_actions; auto by default for local servers). It applies to the
// Chat Completions backends, where response_format and local servers are.
func workflowActions(a config.Agent, m llm.Model, endpoint string) (llm.Model, error) {
	spec, _ := provider.Lookup(a.Backend.Type)
	chat := spec.Wire == provider.WireChat || spec.Wire == provider.WireSim
	mode := toolless.Mode(a.Backend.WorkflowActions)
	if !chat {
		if mode != "" && mode != toolless.Native {
			return nil, usageErr("agent %s: workflow_actions: %s works with Chat Completions backends (chatcompletion, lmstudio, vllm, sglang, ollama, …), not %s",
				a.ID, mode, a.Backend.Type)
		}
		return m, nil
	}
	mode = cmp.Or(mode, toolless.DefaultMode(a.Backend.Type, endpoint))
	return toolless.Wrap(m, toolless.Options{Mode: mode, BaseURL: endpoint, Model: modelName(a)}), nil
}
