package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/massgen/massgen/internal/provider"
)

// backend splits a backend map three ways: typed fields (type, model,
// api_key, base_url, stream, and the sim keys), massgen-owned feature keys
// (Extra, type-checked where upstream checks them), and everything else,
// which is a provider parameter passed through verbatim (Params).
func (d *decoder) backend(bp *pair, path string) Backend {
	n := bp.val
	d.cfg.loc[path] = bp.keyPos
	b := Backend{Stream: true, Line: bp.keyPos.line, Params: map[string]any{}, Extra: map[string]any{}}
	typ, hasType := d.str(join(path, "type"), n.get("type"))
	model, hasModel := d.str(join(path, "model"), n.get("model"))
	b.Type, b.Model = typ, model
	if !hasType && hasModel && !d.cfg.bad[join(path, "type")] {
		// Upstream's runtime infers the type from the model (its validator
		// does not); inferring is the friendlier of the two.
		b.Type = provider.InferType(model)
	}
	if !hasType && !hasModel && d.cfg.bad[join(path, "model")] {
		d.cfg.bad[join(path, "type")] = true // the model error already explains it
	}
	if b.Type == "sim" {
		b.Sim = &SimBackend{}
		if !hasModel && !d.cfg.bad[join(path, "model")] {
			b.Model = DefaultSimModel
		}
	}
	b.APIKey, _ = d.str(join(path, "api_key"), n.get("api_key"))
	if kp := n.get("api_key"); kp != nil && len(kp.val.unset) > 0 {
		b.APIKeyUnsetVar = strings.Join(kp.val.unset, ", ")
	}
	b.BaseURL, _ = d.str(join(path, "base_url"), n.get("base_url"))
	if s, ok := d.boolean(join(path, "stream"), n.get("stream")); ok {
		b.Stream = s
	}
	if v, ok := d.integer(join(path, "requests_per_minute"), n.get("requests_per_minute"), "a positive whole number"); ok {
		b.RequestsPerMinute = v
	}
	if v, ok := d.integer(join(path, "tokens_per_minute"), n.get("tokens_per_minute"), "a positive whole number"); ok {
		b.TokensPerMinute = v
	}
	if v, ok := d.str(join(path, "workflow_actions"), n.get("workflow_actions")); ok {
		if slices.Contains(workflowActionModes, v) {
			b.WorkflowActions = v
		} else {
			p := n.get("workflow_actions")
			d.fail(p.val.pos, join(path, "workflow_actions"), fmt.Sprintf("must be one of %s, got %q", strings.Join(workflowActionModes, ", "), v),
				"auto (the default for local servers) finds out whether the model calls tools")
		}
	}
	spec, _ := provider.Lookup(b.Type)
	cli := spec.Wire == provider.WireCLI
	if cli {
		b.CLI = map[string]any{}
	}
	for _, p := range n.pairs {
		key := join(path, p.key)
		switch {
		case slices.Contains(backendCoreKeys, p.key):
		case slices.Contains(simKeys, p.key):
			if b.Sim != nil {
				d.simKey(&b, p, key)
				continue
			}
			d.ignore(p.keyPos, key, p.key, fmt.Sprintf("'%s' is only used by type: sim; it is ignored here", p.key), "")
			b.Extra[p.key] = plain(p.val)
		case p.key == "system_prompt" || p.key == "append_system_prompt":
			d.fail(p.keyPos, key, fmt.Sprintf("'%s' is not allowed in a backend", p.key),
				"set the agent's 'system_message' instead (next to 'backend:')")
		case p.key == "system_message":
			d.ignore(p.keyPos, key, p.key, "'system_message' belongs to the agent, not its backend; it is ignored here",
				"move it one level up, next to 'backend:'")
			b.Extra[p.key] = plain(p.val)
		case p.key == "custom_tools":
			b.CustomTools = d.customTools(p, key)
		case p.key == "mcp_servers":
			b.MCPServers = d.mcpServers(p, key)
		case p.key == "allowed_tools":
			b.AllowedTools, _ = d.stringList(key, p)
		case p.key == "exclude_tools":
			b.ExcludeTools, _ = d.stringList(key, p)
		case p.key == "context_paths":
			b.ContextPaths = d.contextPaths(p, key)
			b.Extra[p.key] = plain(p.val)
		case p.key == "concurrent_tool_execution":
			if on, ok := d.boolean(key, p); ok && !on {
				d.ignore(p.keyPos, key, p.key, "'concurrent_tool_execution: false' is ignored: massgen runs the tool calls of one response concurrently (up to 4 at once)", "")
			}
		case cli && slices.Contains(cliOwnKeys, p.key):
			// The CLI's own setting: checked as upstream checks it, then
			// its vendor's.
			if isOwnedBackendKey(p.key) {
				d.ownedKey(p, key)
			}
			b.CLI[p.key] = plain(p.val)
		case isOwnedBackendKey(p.key):
			d.ownedKey(p, key)
			if !provider.SupportsBuiltin(b.Type, p.key) {
				d.unsupported(p, key)
			}
			if !p.val.isNull() {
				b.Extra[p.key] = plain(p.val)
			}
		case cli:
			// Not an API's parameter here: a CLI has no request body of
			// ours. Its vendor takes it or names it as ignored.
			b.CLI[p.key] = plain(p.val)
		case isProviderParam(p.key):
			if d.param(p, key) && d.sentTo(b.Type, p, key) {
				b.Params[p.key] = plain(p.val)
			}
		default:
			d.unknownBackendKey(&b, p, key)
		}
	}
	workspaceKeys(&b)
	if cli && b.Cwd == "" {
		// A coding-agent CLI always works in a workspace of its own: it
		// writes files and runs commands there.
		b.Cwd = "workspace"
	}
	if n.get("allowed_tools") != nil && n.get("exclude_tools") != nil {
		d.warnAt(n.get("exclude_tools").keyPos, path, "both 'allowed_tools' and 'exclude_tools' are set, which is confusing",
			"use only 'allowed_tools' (an allowlist) or only 'exclude_tools' (a denylist)")
	}
	return b
}

func (d *decoder) simKey(b *Backend, p *pair, key string) {
	switch p.key {
	case "scenario":
		if p.val.kind == kindMap {
			// Written inline: the scenario travels inside the config (and
			// works in embedded examples, which have no directory).
			b.Sim.Inline, _ = plain(p.val).(map[string]any)
			return
		}
		if s, ok := d.str(key, p); ok {
			// Relative to the config file, so a config and its scenario can
			// move together and run from any directory.
			// Embedded examples ("@examples/…") have no directory.
			if !filepath.IsAbs(s) && d.file != "" && !strings.HasPrefix(d.file, "@") {
				s = filepath.Join(filepath.Dir(d.file), s)
			}
			b.Sim.Scenario = s
		}
	case "ttft_ms":
		b.Sim.TTFTMillis, _ = d.integer(key, p, "a whole number of milliseconds")
	case "tokens_per_second":
		b.Sim.TokensPerSecond, _ = d.number(key, p, "a number")
	}
}

// cliOwnKeys are settings upstream reads for its CLI backends (the
// reference's §11) that massgen otherwise owns or ignores: for a CLI
// backend they are the CLI's, handed to its vendor.
var cliOwnKeys = []string{"permission_mode", "disallowed_tools", "max_thinking_tokens", "max_turns", "approval_mode",
	"model_reasoning_effort", "reasoning", "use_default_prompt", "enable_web_search", "env", "add_dirs"}

// ownedKey checks the types of massgen-owned backend keys that have one.
func (d *decoder) ownedKey(p *pair, key string) {
	switch {
	case isBackendBoolKey(p.key):
		d.boolean(key, p)
	case slices.Contains(backendStringListKeys, p.key):
		d.stringList(key, p)
	case p.key == "context_paths":
		d.contextPaths(p, key)
	case p.key == "cwd", p.key == "command_line_docker_image", p.key == "shared_tools_directory", p.key == "custom_tools_path":
		d.str(key, p)
	case p.key == "command_line_max_processes", p.key == "workspace_max_size_mb":
		if v, ok := d.integer(key, p, "a positive whole number"); ok && v <= 0 {
			d.fail(p.val.pos, key, fmt.Sprintf("%s must be positive, not %d", p.key, v), "leave it out for the default")
		}
	case backendEnums[p.key] != nil:
		if s, ok := d.str(key, p); ok && !slices.Contains(backendEnums[p.key], s) {
			d.fail(p.val.pos, key, fmt.Sprintf("invalid %s '%s'", p.key, s), oneOf(s, backendEnums[p.key]))
		}
	case strings.HasPrefix(p.key, "command_line_docker_"):
		d.dockerKey(p, key)
	}
}

// contextPaths reads a list of {path, permission, protected_paths} entries.
// Permission defaults to read: sharing a directory must never make it
// writable by accident.
func (d *decoder) contextPaths(p *pair, key string) []ContextPath {
	var out []ContextPath
	for ikey, it := range d.mapItems(p, key, "a list of {path, permission} entries", "a map with 'path' and 'permission'") {
		cp := ContextPath{Permission: DefaultContextPermission}
		if s, ok := d.str(join(ikey, "path"), it.get("path")); ok {
			cp.Path = s
		}
		if s, ok := d.str(join(ikey, "permission"), it.get("permission")); ok {
			cp.Permission = s
		}
		if l, ok := d.stringList(join(ikey, "protected_paths"), it.get("protected_paths")); ok {
			cp.ProtectedPaths = l
		}
		for _, e := range it.pairs {
			if !slices.Contains([]string{"path", "permission", "protected_paths"}, e.key) {
				d.unknown(e, ikey, []string{"path", "permission", "protected_paths"})
			}
		}
		// Checked here, not only in Validate, because backend-level entries
		// live in Backend.Extra where Validate does not look.
		d.checkContextPath(cp, ikey, it.pos)
		out = append(out, cp)
	}
	return out
}

func (d *decoder) checkContextPath(cp ContextPath, key string, at pos) {
	c := d.cfg
	for _, diag := range contextPathDiagnostics(cp, key) {
		if c.bad[diag.Key] {
			continue
		}
		p, ok := c.loc[diag.Key]
		if !ok {
			p = at
		}
		d.fail(p, diag.Key, diag.Message, diag.Suggestion)
	}
}

// workflowActionModes are the values of workflow_actions (toolless.Modes).
var workflowActionModes = []string{"native", "auto", "json_schema", "text"}
