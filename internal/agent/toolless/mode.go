package toolless

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Mode is how the workflow actions are asked of a model.
type Mode string

const (
	Native     Mode = "native"      // as tools: the model calls them
	Auto       Mode = "auto"        // native until the server shows it cannot call tools, then JSONSchema
	JSONSchema Mode = "json_schema" // as a response_format schema whose instances are the actions
	Text       Mode = "text"        // as ANSWER:/VOTE: lines the system prompt asks for
)

// Modes are the values of workflow_actions, in the order docs list them.
var Modes = []Mode{Native, Auto, JSONSchema, Text}

// ParseMode reads a workflow_actions value ("" is no choice: the default).
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("workflow_actions must be one of native, auto, json_schema, text (got %q)", s)
}

// localTypes are the backend types of servers run on the user's machine.
var localTypes = map[string]bool{"lmstudio": true, "vllm": true, "sglang": true, "ollama": true}

// DefaultMode is the mode of a backend whose config names none: auto for
// the local servers (lmstudio, vllm, sglang, ollama, and chatcompletion
// at a loopback or private address), where small models without tool
// calling are common; native for everything else, the simulator included.
func DefaultMode(backendType, baseURL string) Mode {
	if localTypes[backendType] || backendType == "chatcompletion" && IsLocalURL(baseURL) {
		return Auto
	}
	return Native
}

// IsLocalURL reports whether a base URL is on this machine or a private
// network: localhost, a loopback address, or a private IPv4/IPv6 range.
func IsLocalURL(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && (ip.IsLoopback() || ip.IsPrivate())
}

// probeTimeout bounds the look at a server's /props.
const probeTimeout = 5 * time.Second

// probeNoTools asks a llama.cpp server (GET <root>/props, root being the
// base URL without its /v1) whether the model's chat template supports tool
// calls. It reports true only when the server says it does not; any other
// answer (another server, no /props, an error) is no evidence.
func probeNoTools(ctx context.Context, client *http.Client, base, model string) bool {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	root := strings.TrimSuffix(strings.TrimRight(base, "/"), "/v1")
	target := root + "/props"
	if model != "" {
		// llama.cpp's router serves several models and asks which one.
		target += "?model=" + url.QueryEscape(model)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	var props struct {
		Caps *struct {
			SupportsToolCalls *bool `json:"supports_tool_calls"`
			SupportsTools     *bool `json:"supports_tools"`
		} `json:"chat_template_caps"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&props) != nil || props.Caps == nil {
		return false
	}
	no := func(b *bool) bool { return b != nil && !*b }
	return no(props.Caps.SupportsToolCalls) || no(props.Caps.SupportsTools)
}
