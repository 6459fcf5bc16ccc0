package app

import (
	"context"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// CLITypes are the backend types of the coding-agent CLIs massgen runs,
// in order.
func CLITypes() []string { return slices.Sorted(maps.Keys(cliPackages)) }

// CLIInstallDir is the directory `massgen setup cli` installs the CLIs
// into (npm --prefix); their programs are in its node_modules/.bin, where
// a team looks for them after PATH.
func CLIInstallDir(getenv func(string) string) string {
	return filepath.Dir(filepath.Dir(cliInstallDir(getenv)))
}

// InstallCLIs installs the pinned npm packages of the CLIs of types (all
// of them when none is given) into CLIInstallDir with npm, which must be
// on PATH; npm's own output goes to out. A package npm has in its cache is
// not downloaded again (pinned versions never change).
func InstallCLIs(ctx context.Context, getenv func(string) string, types []string, out io.Writer) (dir string, err error) {
	if len(types) == 0 {
		types = CLITypes()
	}
	var pkgs []string
	for _, t := range types {
		p, ok := cliPackages[t]
		if !ok {
			return "", usageErr("no coding-agent CLI is called %q: the CLIs are %s", t, strings.Join(CLITypes(), ", "))
		}
		pkgs = append(pkgs, p)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", usageErr("npm is not on PATH: the CLIs are npm packages; install Node.js 20 or later (https://nodejs.org), then run this again")
	}
	dir = CLIInstallDir(getenv)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", execErr("cannot create %s: %w", dir, err)
	}
	args := append([]string{"install", "--prefix", dir, "--no-audit", "--no-fund", "--prefer-offline", "--save-exact"}, pkgs...)
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return "", execErr("npm install %s failed: %w", strings.Join(pkgs, " "), err)
	}
	for _, t := range types {
		prog := filepath.Join(cliInstallDir(getenv), cliProgram(t))
		if _, err := os.Stat(prog); err != nil {
			return "", execErr("npm installed %s, but %s is missing: %v", cliPackages[t], prog, err)
		}
	}
	return dir, nil
}

// cliProgram is the program of a CLI's package.
func cliProgram(typ string) string {
	return map[string]string{"claude_code": "claude", "codex": "codex", "gemini_cli": "gemini", "copilot": "copilot"}[typ]
}
