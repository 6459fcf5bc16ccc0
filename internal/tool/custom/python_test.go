package custom

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/tool"
)

// needPython is the Python the tests run tools with; without one they
// skip, except in CI, which must have it.
func needPython(t *testing.T) string {
	t.Helper()
	exe, err := FindPython(os.Getenv)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must have Python for the custom tool tests: %v", err)
		}
		t.Skipf("no Python: %v", err)
	}
	return exe
}

func testdata(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// loadAll loads specs from testdata/tools.py into a fresh runner that the
// test closes, failing on any load error.
func loadAll(t *testing.T, specs ...PythonSpec) (*Python, map[string]tool.Tool) {
	t.Helper()
	py := NewPython(needPython(t), t.TempDir())
	t.Cleanup(py.Close)
	for i := range specs {
		if specs[i].File == "" {
			specs[i].File = testdata(t, "tools.py")
		}
	}
	tools, errs, err := py.Load(t.Context(), specs)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]tool.Tool{}
	for i, tl := range tools {
		if errs[i] != nil {
			t.Fatalf("load %s: %v", specs[i].Function, errs[i])
		}
		byName[tl.Def().Name] = tl
	}
	return py, byName
}

func call(t *testing.T, tl tool.Tool, args string) tool.Result {
	t.Helper()
	return tool.Invoke(t.Context(), tl, args, 0)
}

func TestPythonToolsOfEveryKindRun(t *testing.T) {
	_, tools := loadAll(t,
		PythonSpec{Name: "custom_tool__add", Function: "add"},
		PythonSpec{Name: "custom_tool__greet", Function: "greet", PresetArgs: map[string]any{"greeting": "Bonjour"}},
		PythonSpec{Name: "custom_tool__count", Function: "count"},
		PythonSpec{Name: "custom_tool__fails", Function: "fails"},
		PythonSpec{Name: "custom_tool__picture", Function: "picture"},
		PythonSpec{Name: "custom_tool__plain", Function: "plain"},
	)
	tests := []struct {
		tool, args string
		want       tool.Result
	}{
		{"custom_tool__add", `{"a": 40}`, tool.Result{Content: "40 + 2 = 42"}},
		{"custom_tool__greet", `{"name": "Ada"}`, tool.Result{Content: "Bonjour, Ada!"}},
		{"custom_tool__count", `{"n": 3}`, tool.Result{Content: "counted 3"}},
		{"custom_tool__fails", `{"reason": "no"}`, tool.Result{IsError: true,
			Content: "custom tool custom_tool__fails failed: ValueError: cannot do it: no (at tools.py line 48, in fails)"}},
		{"custom_tool__add", `{"a": 1, "c": 2}`, tool.Result{IsError: true,
			Content: "custom tool custom_tool__add failed: TypeError: add() got an unexpected keyword argument 'c'"}},
		{"custom_tool__picture", `{}`, tool.Result{Content: "here it is\n[image: 8 characters of data, not shown]"}},
		{"custom_tool__plain", `{"x": 21}`, tool.Result{Content: `{"double": 42}`}},
	}
	for _, tt := range tests {
		t.Run(tt.tool+tt.args, func(t *testing.T) {
			if got := call(t, tools[tt.tool], tt.args); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestPythonSchemasComeFromSignatureHintsAndDocstring(t *testing.T) {
	_, tools := loadAll(t,
		PythonSpec{Name: "custom_tool__add", Function: "add"},
		PythonSpec{Name: "custom_tool__greet", Function: "greet", PresetArgs: map[string]any{"greeting": "Hi"}},
		PythonSpec{Name: "custom_tool__typed", Function: "typed", Description: "From the config."},
	)
	add := tools["custom_tool__add"].Def()
	if add.Description != "Add two numbers." {
		t.Errorf("add description = %q", add.Description)
	}
	wantAdd := map[string]any{"type": "object", "required": []any{"a"}, "properties": map[string]any{
		"a": map[string]any{"type": "integer", "description": "The first number."},
		"b": map[string]any{"type": "integer", "description": "The second number, which may be left out.", "default": float64(2)},
	}}
	if diff := cmp.Diff(wantAdd, add.Parameters); diff != "" {
		t.Errorf("add schema (-want +got):\n%s", diff)
	}
	greet := tools["custom_tool__greet"].Def()
	if greet.Description != "Greet someone.\n\nA longer paragraph that belongs to the description too." {
		t.Errorf("greet description = %q", greet.Description)
	}
	wantGreet := map[string]any{"type": "object", "required": []any{"name"}, "properties": map[string]any{
		"name":        map[string]any{"type": "string", "description": "Who to greet."},
		"punctuation": map[string]any{"type": "string", "description": "How to end.", "default": "!"},
	}}
	if diff := cmp.Diff(wantGreet, greet.Parameters); diff != "" {
		t.Errorf("greet schema: the preset greeting must be hidden (-want +got):\n%s", diff)
	}
	typed := tools["custom_tool__typed"].Def()
	if typed.Description != "From the config." {
		t.Errorf("typed description = %q, want the config's", typed.Description)
	}
	wantTyped := map[string]any{"type": "object", "required": []any{"words", "scores", "mode"}, "properties": map[string]any{
		"words":    map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Some words."},
		"scores":   map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "number"}},
		"mode":     map[string]any{"type": "string", "enum": []any{"fast", "slow"}, "description": "How to go."},
		"flag":     map[string]any{"type": "boolean", "default": false},
		"note":     map[string]any{"type": "string", "default": nil},
		"anything": map[string]any{"default": nil},
	}}
	if diff := cmp.Diff(wantTyped, typed.Parameters); diff != "" {
		t.Errorf("typed schema (-want +got):\n%s", diff)
	}
}

// The upstream tool file is the proof that tool files written for MassGen
// run unchanged: it imports massgen.tool._result, which the runner provides.
func TestUpstreamToolFileRunsUnchanged(t *testing.T) {
	file, err := filepath.Abs("../../../../shared/reference/massgen-tools/massgen/tool/_basic/_two_num_tool.py")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Skipf("the upstream tool file is not beside the project: %v", err)
	}
	_, tools := loadAll(t, PythonSpec{Name: "custom_tool__two_num_tool", File: file, Function: "two_num_tool"})
	tl := tools["custom_tool__two_num_tool"]
	if d := tl.Def(); d.Description != "Add two numbers together." || len(d.Parameters["required"].([]any)) != 2 {
		t.Errorf("def = %+v", d)
	}
	if got := call(t, tl, `{"x": 123, "y": 456}`); !reflect.DeepEqual(got, (tool.Result{Content: "The sum of 123 and 456 is 579"})) {
		t.Errorf("got %+v", got)
	}
}

func TestMissingFunctionsAndFilesAreErrorsNotCrashes(t *testing.T) {
	py := NewPython(needPython(t), t.TempDir())
	defer py.Close()
	broken := filepath.Join(t.TempDir(), "broken.py")
	if err := os.WriteFile(broken, []byte("import no_such_module_here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tools, errs, err := py.Load(t.Context(), []PythonSpec{
		{Name: "custom_tool__add", File: testdata(t, "tools.py"), Function: "add"},
		{Name: "custom_tool__nope", File: testdata(t, "tools.py"), Function: "nope"},
		{Name: "custom_tool__broken", File: broken, Function: "f"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if errs[0] != nil {
		t.Errorf("add: %v", errs[0])
	}
	if errs[1] == nil || !strings.Contains(errs[1].Error(), "defines no function 'nope' (its functions: add, count, die, fails, greet, picture, plain, typed, wait)") {
		t.Errorf("missing function: %v", errs[1])
	}
	if errs[2] == nil || !strings.Contains(errs[2].Error(), "ModuleNotFoundError: No module named 'no_such_module_here'") {
		t.Errorf("broken file: %v", errs[2])
	}
	got := call(t, tools[1], `{}`)
	if !got.IsError || !strings.Contains(got.Content, "defines no function 'nope'") {
		t.Errorf("calling the missing function: %+v", got)
	}
	if got := call(t, tools[0], `{"a": 1, "b": 1}`); got.Content != "1 + 1 = 2" {
		t.Errorf("the good tool beside broken ones: %+v", got)
	}
}

func TestMissingPythonIsAnErrorForEveryTool(t *testing.T) {
	py := NewPython(filepath.Join(t.TempDir(), "no-python-here"), t.TempDir())
	defer py.Close()
	tools, _, err := py.Load(t.Context(), []PythonSpec{{Name: "custom_tool__add", File: "/x.py", Function: "add"}})
	if err == nil || !strings.Contains(err.Error(), "cannot start") {
		t.Fatalf("err = %v", err)
	}
	if got := call(t, tools[0], `{}`); !got.IsError || !strings.Contains(got.Content, "cannot start") {
		t.Errorf("call = %+v", got)
	}
	if _, err := FindPython(func(string) string { return "/nonexistent/python9" }); err == nil || !strings.Contains(err.Error(), PythonEnv) {
		t.Errorf("FindPython with a bad %s: %v", PythonEnv, err)
	}
}

// Calls share one runner and run at once: four waits of a second each
// finish together, not one after another, with their own answers.
func TestConcurrentCallsShareTheRunner(t *testing.T) {
	py, tools := loadAll(t, PythonSpec{Name: "custom_tool__wait", Function: "wait"}, PythonSpec{Name: "custom_tool__add", Function: "add"})
	pid := py.Pid()
	var wg sync.WaitGroup
	results := make([]tool.Result, 8)
	for i := range results {
		wg.Go(func() {
			if i%2 == 0 {
				results[i] = call(t, tools["custom_tool__wait"], `{"seconds": 0.2}`)
			} else {
				results[i] = call(t, tools["custom_tool__add"], `{"a": `+string(rune('0'+i))+`, "b": 0}`)
			}
		})
	}
	wg.Wait()
	for i, r := range results {
		want := "waited 0.2"
		if i%2 == 1 {
			want = string(rune('0'+i)) + " + 0 = " + string(rune('0'+i))
		}
		if r.IsError || r.Content != want {
			t.Errorf("call %d = %+v, want %q", i, r, want)
		}
	}
	if py.Pid() != pid {
		t.Error("the calls did not share one runner")
	}
}

func TestTimeoutAndCancellationStopTheCallNotTheRunner(t *testing.T) {
	py := NewPython(needPython(t), t.TempDir())
	defer py.Close()
	tools, _, err := py.Load(t.Context(), []PythonSpec{
		{Name: "custom_tool__wait", File: testdata(t, "tools.py"), Function: "wait", Timeout: 50 * time.Millisecond},
		{Name: "custom_tool__add", File: testdata(t, "tools.py"), Function: "add"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := call(t, tools[0], `{"seconds": 60}`)
	if !got.IsError || got.Content != "custom tool custom_tool__wait did not finish within 50ms and was stopped" {
		t.Errorf("timeout: %+v", got)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if got := tools[0].Call(ctx, []byte(`{"seconds": 60}`)); !got.IsError {
		t.Errorf("a cancelled call succeeded: %+v", got)
	}
	if got := call(t, tools[1], `{"a": 2}`); got.Content != "2 + 2 = 4" {
		t.Errorf("after the timeout: %+v", got)
	}
}

// A tool that kills the runner fails with the reason; the next call gets a
// fresh runner with the tools loaded again.
func TestARunnerThatDiesIsRestarted(t *testing.T) {
	py, tools := loadAll(t, PythonSpec{Name: "custom_tool__die", Function: "die"}, PythonSpec{Name: "custom_tool__add", Function: "add"})
	got := call(t, tools["custom_tool__die"], `{}`)
	if !got.IsError || !strings.Contains(got.Content, "the Python tool runner exited (exit status 3)") {
		t.Errorf("die: %+v", got)
	}
	if got := call(t, tools["custom_tool__add"], `{"a": 5}`); got.Content != "5 + 2 = 7" {
		t.Errorf("after a restart: %+v", got)
	}
	if py.Pid() == 0 {
		t.Error("no runner after the restart")
	}
}

func TestCloseKillsTheRunner(t *testing.T) {
	py, tools := loadAll(t, PythonSpec{Name: "custom_tool__add", Function: "add"})
	pid := py.Pid()
	if pid == 0 {
		t.Fatal("no runner")
	}
	py.Close()
	// Close waited for the runner to be reaped: its pid is gone.
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("runner %d still exists after Close", pid)
	}
	if got := call(t, tools["custom_tool__add"], `{"a": 1}`); !got.IsError || !strings.Contains(got.Content, "closed") {
		t.Errorf("call after Close: %+v", got)
	}
}
