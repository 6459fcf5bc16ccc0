package custom

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

//go:embed all:runner
var runnerFS embed.FS

const runnerScript = "massgen_runner.py"

// PythonEnv names the variable that picks the Python to run tools with.
const PythonEnv = "MASSGEN_PYTHON"

// FindPython is the Python that runs custom tools: $MASSGEN_PYTHON, then
// python3, then python on the PATH.
func FindPython(getenv func(string) string) (string, error) {
	if p := getenv(PythonEnv); p != "" {
		exe, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("%s=%s: %w", PythonEnv, p, err)
		}
		return exe, nil
	}
	for _, name := range []string{"python3", "python"} {
		if exe, err := exec.LookPath(name); err == nil {
			return exe, nil
		}
	}
	return "", fmt.Errorf("no Python found (looked for python3 and python on the PATH): install Python 3.9 or later, or set %s to one", PythonEnv)
}

var (
	installOnce sync.Once
	installDir  string
	installErr  error
)

// installRunner writes the embedded runner to <cache>/massgen/runner-<hash>
// once per process and returns the script's path. The hash of the files
// names the directory, so versions never mix and a finished directory is
// never rewritten.
func installRunner() (string, error) {
	installOnce.Do(func() { installDir, installErr = install() })
	if installErr != nil {
		return "", installErr
	}
	return filepath.Join(installDir, runnerScript), nil
}

func install() (string, error) {
	h := sha256.New()
	files := map[string][]byte{}
	err := fs.WalkDir(runnerFS, "runner", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := runnerFS.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("runner", filepath.FromSlash(p))
		files[rel] = data
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		return "", err
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "massgen", "runner-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, runnerScript)); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("cannot install the Python tool runner: %w", err)
	}
	// Written beside, then renamed into place: two massgen processes
	// starting at once never see a half-written runner.
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".runner-*")
	if err != nil {
		return "", fmt.Errorf("cannot install the Python tool runner: %w", err)
	}
	defer os.RemoveAll(tmp)
	for rel, data := range files {
		p := filepath.Join(tmp, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return "", fmt.Errorf("cannot install the Python tool runner: %w", err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, runnerScript)); statErr == nil {
			return dir, nil // another process won the race
		}
		return "", errors.Join(errors.New("cannot install the Python tool runner"), err)
	}
	return dir, nil
}
