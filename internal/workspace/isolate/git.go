package isolate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// gitTimeout bounds every git command.
const gitTimeout = 2 * time.Minute

// gitArgs come first on every command: no hooks, no fsmonitor, no
// untracked cache written, whatever the repository's own config says.
var gitArgs = []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
	"-c", "core.untrackedCache=false", "-c", "safe.directory=*"}

// git runs the git binary in dir with a scrubbed environment: no system or
// global config, no GIT_* variables of massgen's own environment (a GIT_DIR
// would point it elsewhere), optional locks off so reading a repository
// never rewrites its index, a throwaway HOME. It returns stdout; ok exit
// codes besides 0 are accepted (diff --no-index exits 1 on differences).
func git(ctx context.Context, dir, home string, okCodes []int, args ...string) ([]byte, error) {
	path, err := exec.LookPath("git")
	if err != nil {
		return nil, errors.New("the git binary is not on PATH")
	}
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, append(append([]string{}, gitArgs...), args...)...)
	cmd.Dir = dir
	cmd.Env = gitEnv(home)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		for _, c := range okCodes {
			if ee.ExitCode() == c {
				return out.Bytes(), nil
			}
		}
	}
	if err != nil {
		msg := strings.TrimSpace(errb.String())
		if len(msg) > 400 {
			msg = msg[:400] + "…"
		}
		return nil, fmt.Errorf("git %s: %v: %s", args[0], err, msg)
	}
	return out.Bytes(), nil
}

func gitEnv(home string) []string {
	env := []string{
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0",
		"GIT_OPTIONAL_LOCKS=0", "GIT_ATTR_NOSYSTEM=1", "LC_ALL=C", "HOME=" + home,
		"GIT_CEILING_DIRECTORIES=" + home,
	}
	if p := os.Getenv("PATH"); p != "" {
		env = append(env, "PATH="+p)
	}
	return env
}

// repoOf says whether dir is inside a git work tree git can read.
func repoOf(ctx context.Context, dir, home string) bool {
	out, err := git(ctx, dir, home, nil, "rev-parse", "--is-inside-work-tree")
	return err == nil && strings.TrimSpace(string(out)) == "true"
}

// gitFiles lists what git sees under dir: tracked files (as they are in
// the work tree now) and untracked files not ignored, relative to dir.
// A tracked file deleted in the work tree is listed but absent on disk,
// which the copy then leaves out.
func gitFiles(ctx context.Context, dir, home string) (map[string]bool, error) {
	out, err := git(ctx, dir, home, nil, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	files := map[string]bool{}
	for f := range strings.SplitSeq(string(out), "\x00") {
		if f != "" {
			files[f] = true
		}
	}
	return files, nil
}
