package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/massgen/massgen/internal/llm"
)

// MaxResult is the most bytes of a tool result that reach the model:
// about 32k tokens, a good part of a small model's context, and more than
// any one step needs to see at once. Every result passes here (Invoke),
// whatever made it: MCP servers, custom tools (Python and command),
// execute_command and the file tools. A longer one is cut, with a note
// that says how much was cut and how to get the rest.
const MaxResult = 128 << 10

// Cut keeps about the first MaxResult bytes of r's content (on a line boundary
// when there is one in the last quarter, else on a rune boundary) and
// appends a note saying what was cut, all in MaxResult bytes; rest is what the note tells the
// model to do for the rest ("" for the default). r is returned as it is
// when it fits.
func Cut(r Result, rest string) Result {
	if len(r.Content) <= MaxResult {
		return r
	}
	total := len(r.Content)
	if len(rest) > noteRoom/2 {
		rest = rest[:noteRoom/2] + "…"
	}
	// The note fits in MaxResult too: a cut result is never cut again.
	cut := MaxResult - noteRoom
	if nl := strings.LastIndexByte(r.Content[:cut], '\n'); nl >= cut*3/4 {
		cut = nl + 1
	}
	for cut > 0 && r.Content[cut]&0xC0 == 0x80 {
		cut--
	}
	if rest == "" {
		rest = "call the tool again asking for less (a narrower query, a range, a page)"
	}
	// A copy, not a slice of the whole: the whole may be megabytes that
	// would otherwise stay alive in every message that holds the result.
	var b strings.Builder
	b.Grow(cut + 200)
	b.WriteString(r.Content[:cut])
	if !strings.HasSuffix(r.Content[:cut], "\n") {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "[result truncated: showing the first %s of %s; %s cut. To see the rest, %s.]",
		Size(cut), Size(total), Size(total-cut), rest)
	r.Content = b.String()
	return r
}

// noteRoom is kept for the note within MaxResult.
const noteRoom = 1024

// Size says a byte count the way a person reads it.
func Size(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// MaxKept is the most of one result KeepWhole writes to the workspace.
const MaxKept = 32 << 20

// KeepWhole returns a Set.Map function for an agent with a workspace:
// a result longer than MaxResult is written whole to a file under dir
// (tool_results/<tool>-<time>-<n>.txt, at most MaxKept bytes) and the model gets the first MaxResult
// bytes with a note naming the file, which its file tools can read in
// parts. Tools that declare their Effects keep them.
func KeepWhole(dir string) func(Tool) Tool {
	var n atomic.Int64
	return func(t Tool) Tool {
		k := keepWhole{t: t, dir: dir, n: &n}
		if _, ok := t.(Effects); ok {
			return keepWholeEffects{k}
		}
		return k
	}
}

type keepWhole struct {
	t   Tool
	dir string
	n   *atomic.Int64
}

func (k keepWhole) Def() llm.ToolDef { return k.t.Def() }

func (k keepWhole) Call(ctx context.Context, args json.RawMessage) Result {
	r := k.t.Call(ctx, args)
	if len(r.Content) <= MaxResult {
		return r
	}
	name := safeFileName(k.t.Def().Name)
	rel := filepath.Join("tool_results", fmt.Sprintf("%s-%d-%d.txt", name, time.Now().Unix(), k.n.Add(1)))
	path := filepath.Join(k.dir, rel)
	kept := r.Content[:min(len(r.Content), MaxKept)]
	err := os.MkdirAll(filepath.Dir(path), 0o755)
	if err == nil {
		err = os.WriteFile(path, []byte(kept), 0o644)
	}
	switch {
	case err != nil:
		return Cut(r, fmt.Sprintf("call the tool again asking for less (keeping the whole result in your workspace failed: %v)", err))
	case len(kept) < len(r.Content):
		return Cut(r, fmt.Sprintf("read its first %s from %s in your workspace, a part at a time (read_file, grep), or call the tool again asking for less",
			Size(len(kept)), path))
	}
	return Cut(r, fmt.Sprintf("read the whole result from %s in your workspace, a part at a time (read_file, grep)", path))
}

type keepWholeEffects struct{ keepWhole }

func (k keepWholeEffects) ReadOnly() bool    { return k.t.(Effects).ReadOnly() }
func (k keepWholeEffects) Destructive() bool { return k.t.(Effects).Destructive() }

// safeFileName keeps letters, digits, '-', '_' and '.' of a tool's name.
func safeFileName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	if len(b) > 80 {
		b = b[:80]
	}
	return string(b)
}
