package massgen_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/massgen/massgen"
	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// deps lists the packages pkg links, built with the given tags.
func deps(t *testing.T, pkg string, tags ...string) map[string]bool {
	t.Helper()
	args := []string{"list", "-deps"}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	out, err := exec.Command("go", append(args, pkg)...).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	m := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		m[p] = true
	}
	if !m["github.com/massgen/massgen/internal/llm"] && pkg == "." {
		t.Fatalf("%s does not link internal/llm: the checks below would pass vacuously", pkg)
	}
	return m
}

// reaches reports the packages of d under any of the prefixes.
func reaches(d map[string]bool, prefixes ...string) []string {
	var hit []string
	for p := range d {
		for _, pre := range prefixes {
			if p == pre || strings.HasPrefix(p, pre+"/") {
				hit = append(hit, p)
			}
		}
	}
	return hit
}

const mod = "github.com/massgen/massgen/"

// The library links what a config commonly needs and no more (DESIGN.md
// §3a, "Weight"): the pure-Go providers by default; Gemini's SDK (gRPC,
// OpenCensus, Google auth: half of a build), the Docker client and a
// terminal UI only when a program imports them. A change that pulls one of
// them back into every program fails here.
func TestLibraryLinksOnlyWhatItNeeds(t *testing.T) {
	d := deps(t, ".")
	for _, heavy := range [][]string{
		{"google.golang.org/genai", "cloud.google.com/go/auth", "github.com/google/s2a-go", mod + "internal/llm/gemini"},
		{"github.com/moby/moby", "github.com/distribution/reference", mod + "internal/workspace/sandbox/docker"},
		{"charm.land/glamour", "github.com/alecthomas/chroma", mod + "internal/tui"},
	} {
		if hit := reaches(d, heavy...); len(hit) > 0 {
			t.Errorf("package massgen links %v", hit)
		}
	}
	// The defaults a program gets without asking.
	for _, p := range []string{"chatcompat", "openai", "anthropic"} {
		if !d[mod+"internal/llm/"+p] {
			t.Errorf("package massgen does not link provider %s by default", p)
		}
	}
	// With the defaults off, a program links the providers it imports:
	// none here.
	lean := deps(t, ".", "massgen_nodefaultproviders")
	if hit := reaches(lean, "github.com/openai/openai-go", "github.com/anthropics/anthropic-sdk-go", mod+"internal/llm/chatcompat",
		mod+"internal/llm/openai", mod+"internal/llm/anthropic"); len(hit) > 0 {
		t.Errorf("with -tags massgen_nodefaultproviders, package massgen links %v", hit)
	}
}

// The command links every provider and docker mode, so every config
// runs; and no markdown renderer that builds its tables at start-up.
func TestCommandLinksEveryProviderAndNoStartUpWeight(t *testing.T) {
	d := deps(t, "./cmd/massgen")
	for _, p := range []string{"internal/llm/chatcompat", "internal/llm/openai", "internal/llm/anthropic", "internal/llm/gemini",
		"internal/workspace/sandbox/docker"} {
		if !d[mod+p] {
			t.Errorf("cmd/massgen does not link %s", p)
		}
	}
	if hit := reaches(d, "charm.land/glamour", "github.com/alecthomas/chroma", "github.com/microcosm-cc/bluemonday", "github.com/yuin/goldmark"); len(hit) > 0 {
		t.Errorf("cmd/massgen links %v (their package init runs on every start)", hit)
	}
}

// A config naming a provider the program did not link fails before any
// request, and says what to import.
func TestUnlinkedProviderSaysWhatToImport(t *testing.T) {
	_, err := massgen.Run(t.Context(), "q", massgen.Options{Agents: []massgen.AgentSpec{{ID: "a", Backend: "gemini", Model: "gemini-2.5-flash", APIKey: "k"}},
		NoLogs: true, WorkDir: t.TempDir(), Getenv: noEnv})
	if err == nil || !strings.Contains(err.Error(), `import _ "github.com/massgen/massgen/providers/gemini"`) {
		t.Fatalf("a gemini agent in a program without Gemini: err = %v", err)
	}
}

// Docker mode in a program that did not link it: no command runs, and
// the reason names the import (the run's warnings show it before it
// starts).
func TestUnlinkedDockerModeSaysWhatToImport(t *testing.T) {
	g, err := workspace.New(workspace.Policy{Agent: "a", Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	r, err := sandbox.New(g, sandbox.Config{Mode: "docker"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Disabled(); err == nil || !strings.Contains(err.Error(), `import _ "github.com/massgen/massgen/sandbox/docker"`) {
		t.Fatalf("docker mode without sandbox/docker: Disabled() = %v", err)
	}
	if r.Sandboxed() {
		t.Error("a runner with no container says it is sandboxed")
	}
}

// With no config, the team comes from the keys set; a key whose provider
// the program does not link is skipped, and when no other is left the
// error says what to import rather than building a team that cannot run.
func TestDefaultTeamSkipsUnlinkedProviders(t *testing.T) {
	env := map[string]string{"GEMINI_API_KEY": "k", "HOME": t.TempDir()}
	_, err := massgen.Run(t.Context(), "q", massgen.Options{NoLogs: true, WorkDir: t.TempDir(), Getenv: func(k string) string { return env[k] }})
	if err == nil || !strings.Contains(err.Error(), "GEMINI_API_KEY is set") ||
		!strings.Contains(err.Error(), `import _ "github.com/massgen/massgen/providers/gemini"`) {
		t.Fatalf("only a Gemini key, Gemini not linked: err = %v", err)
	}
}
