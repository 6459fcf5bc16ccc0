package attack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"evil","version":"1"}}}`

// rawInit posts an initialize to massgen mcp --http with the given
// headers and returns the status and body.
func rawInit(t *testing.T, url string, hdr map[string]string) (int, string) {
	req, err := http.NewRequest("POST", url, bytes.NewBufferString(initBody))
	must(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	must(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, string(b)
}

// hostileConfigs are config arguments a hostile caller of massgen_run
// gives: files to echo back, and a config whose MCP server runs a command.
func hostileConfigs(t *testing.T, dir, marker string) map[string]string {
	evil := filepath.Join(dir, "evil", "team.yaml")
	writeFiles(t, dir, map[string]string{"evil/team.yaml": fmt.Sprintf(
		"agent:\n  backend:\n    type: sim\n    model: x\n    mcp_servers:\n      m: {command: sh, args: [-c, 'touch %s; env > %s.env']}\n", marker, marker)})
	return map[string]string{
		"/proc/self/environ":           "/proc/self/environ",
		"/etc/passwd":                  "/etc/passwd",
		"/etc/shadow":                  "/etc/shadow",
		"../ up to /etc/passwd":        "../../../../../../../../etc/passwd",
		"@examples/ up to /etc/passwd": "@examples/../../../../../../../etc/passwd",
		"a config running a command":   evil,
	}
}

// checkNoEcho fails t when text holds the environment, /etc/passwd or
// /etc/shadow, or the marker exists.
func checkNoEcho(t *testing.T, text, marker string) {
	t.Helper()
	if strings.Contains(text, canary) {
		t.Errorf("the answer holds a key:\n%s", excerpt(text, canary))
	}
	for _, f := range []string{"/etc/passwd", "/etc/shadow"} {
		for _, l := range hostLines(f) {
			if strings.Contains(text, l) {
				t.Errorf("the answer holds %s's line %q", f, l)
				break
			}
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the hostile config's command ran (%s exists)", marker)
	}
}

func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	s, _ := json.Marshal(r.StructuredContent)
	return b.String() + string(s)
}

// Class 9: a hostile local user of `massgen mcp --http` (no token, a
// wrong one, another Host, another Origin, massgen_run with hostile
// config paths) and a hostile client over stdio.
func TestMCPServer(t *testing.T) {
	dir := tempDir(t)
	writeFiles(t, dir, map[string]string{"sim.yaml": "agent:\n  backend: {type: sim, model: x}\n"})
	d := startDaemon(t, dir, nil, "mcp", "--http", "127.0.0.1:0", "--config", "sim.yaml", "--log-dir", "logs")
	url := "http://" + d.addr + "/mcp"
	t.Logf("massgen mcp at %s (token printed: %v)", url, d.token != "")
	for name, hdr := range map[string]map[string]string{
		"http: no token":                    {},
		"http: wrong token":                 {"Authorization": "Bearer wrong-token-0123456789abcdef"},
		"http: empty bearer":                {"Authorization": "Bearer "},
		"http: token in the wrong scheme":   {"Authorization": "Basic " + d.token},
		"http: Host: evil.example":          {"Host": "evil.example", "Authorization": "Bearer " + d.token},
		"http: Host: evil.example:port":     {"Host": "evil.example:" + strings.Split(d.addr, ":")[1], "Authorization": "Bearer " + d.token},
		"http: Origin: http://evil.example": {"Origin": "http://evil.example", "Authorization": "Bearer " + d.token},
	} {
		attempt(t, name, func(t *testing.T) {
			code, body := rawInit(t, url, hdr)
			t.Logf("%d %s", code, tail(body, 300))
			if code != 401 && code != 403 {
				t.Errorf("initialize was answered %d, want 401 or 403: %s", code, tail(body, 300))
			}
		})
	}
	// massgen_run as the hostile user, who has no token.
	for name, cfg := range hostileConfigs(t, dir, filepath.Join(dir, "MARKER-http")) {
		attempt(t, "http massgen_run without a token: config "+name, func(t *testing.T) {
			marker := filepath.Join(dir, "MARKER-http")
			os.Remove(marker)
			cl := mcp.NewClient(&mcp.Implementation{Name: "evil", Version: "1"}, nil)
			ctx := ctxTimeout(t, 60*time.Second)
			s, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
			if err != nil {
				t.Logf("refused at connect: %v", err)
				checkNoEcho(t, err.Error(), marker)
				return
			}
			defer s.Close()
			r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "massgen_run", Arguments: map[string]any{"question": "q", "config": cfg}})
			if err != nil {
				t.Logf("refused: %v", err)
				checkNoEcho(t, err.Error(), marker)
				return
			}
			text := resultText(r)
			t.Logf("isError %v: %s", r.IsError, tail(text, 400))
			t.Errorf("a caller without the token ran massgen_run (isError %v)", r.IsError)
			time.Sleep(500 * time.Millisecond)
			checkNoEcho(t, text, marker)
		})
	}
	// Over stdio the client is the user's own (an agent that may be
	// prompt-injected): a file is never echoed back.
	for name, cfg := range hostileConfigs(t, dir, filepath.Join(dir, "MARKER-stdio")) {
		if name == "a config running a command" {
			continue // the stdio client may run its own team files
		}
		attempt(t, "stdio massgen_run: config "+name, func(t *testing.T) {
			cl := mcp.NewClient(&mcp.Implementation{Name: "evil", Version: "1"}, nil)
			ctx := ctxTimeout(t, 60*time.Second)
			cmd := exec.Command(bin, "mcp", "--config", "sim.yaml", "--no-logs")
			cmd.Dir = dir
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			s, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			must(t, err)
			r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "massgen_run", Arguments: map[string]any{"question": "q", "config": cfg}})
			s.Close() // the server exits: its stderr is complete before it is read
			text := ""
			if err != nil {
				text = err.Error()
			} else {
				text = resultText(r)
				if !r.IsError {
					t.Errorf("massgen_run accepted config %s", cfg)
				}
			}
			t.Logf("%s", tail(text, 400))
			checkNoEcho(t, text+stderr.String(), filepath.Join(dir, "MARKER-stdio"))
		})
	}
}
