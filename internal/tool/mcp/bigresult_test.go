package mcp

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen/massgen/internal/tool"
)

// bigServerEnv makes the test binary an MCP stdio server with one tool,
// big, whose result is that many bytes of text.
const bigServerEnv = "MASSGEN_TEST_MCP_BIG_SERVER"

func serveBig() {
	n, _ := strconv.Atoi(os.Getenv(bigServerEnv))
	s := sdk.NewServer(&sdk.Implementation{Name: "big", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{Name: "big", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			line := strings.Repeat("x", 99) + "\n"
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat(line, n/100)}}}, nil
		})
	_ = s.Run(context.Background(), &sdk.StdioTransport{})
}

// bigServer is this test binary serving results of n bytes.
func bigServer(t testing.TB, n int) Server {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Server{Name: "big", Command: exe, Env: map[string]string{bigServerEnv: strconv.Itoa(n)}}
}

// Issue 18: a 20 MB result was refused (the SDK reads at most 16 MiB a
// message); it is read and cut for the model, with a note. The server is
// a real process (this test binary).
func TestATwentyMegabyteResultIsCutNotRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("reading 20 MB costs the SDK about 380 MB of allocations")
	}
	p, hs := started(t, Options{}, bigServer(t, 20<<20))
	set := toolsOf(t, p.Tools("a", hs, nil, nil))
	tl, _ := set.Lookup("mcp__big__big")
	res := tool.Invoke(ctxT(t), tl, "{}", 0)
	if res.IsError || len(res.Content) > tool.MaxResult || !strings.Contains(res.Content, "[result truncated: showing the first") ||
		!strings.Contains(res.Content, "of 20.0 MiB") {
		t.Fatalf("result: error %v, %d bytes, ending %q", res.IsError, len(res.Content), res.Content[max(0, len(res.Content)-200):])
	}
}

// BenchmarkBigResult measures what one call with a 5 MB result allocates
// in massgen (the client side: the server is another process).
func BenchmarkBigResult(b *testing.B) {
	for _, n := range []int{5 << 20, 20 << 20} {
		b.Run(strconv.Itoa(n>>20)+"MB", func(b *testing.B) {
			p := NewPool(Options{LogDir: b.TempDir()})
			defer p.Close()
			h, err := p.Add(bigServer(b, n))
			if err != nil {
				b.Fatal(err)
			}
			p.Start()
			tools, err := p.Tools("a", []Handle{h}, nil, nil).Tools(b.Context())
			if err != nil || len(tools) != 1 {
				b.Fatalf("tools %v, %v", tools, err)
			}
			b.ReportAllocs()
			var peak uint64
			for b.Loop() {
				res := tool.Invoke(b.Context(), tools[0], "{}", 0)
				if len(res.Content) > 1<<20 {
					b.Fatalf("result not cut: %d bytes", len(res.Content))
				}
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
				b.Logf("%d MB: %q", n>>20, res.Content[max(0, len(res.Content)-200):])
			}
			b.ReportMetric(float64(peak)/(1<<20), "heap-MiB")
		})
	}
}
