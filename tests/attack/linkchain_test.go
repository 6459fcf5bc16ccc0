package attack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chain is an MCP server installed the way nvm, Homebrew and ~/.local/bin
// install one, outside the workspace and in the user's home: a PATH
// entry's link to a link in a hidden directory, to a node_modules/.bin
// link reached through a linked directory, to the package's script. Every
// hop is shown to the server read-only (sandbox.programBinds, commit
// 87f2c07); beside each hop lies a secret of the user's.
type chain struct {
	home    string
	pathDir string            // the PATH entry holding the first link
	hops    []string          // the links, in the order the kernel follows them
	script  string            // where they end
	secrets map[string]string // path -> content, each beside a hop (or in the home)
	// secretPaths names them: "pathdir" beside the PATH entry's link,
	// "hop" beside the link in the hidden directory, "home" in the home.
	secretPaths map[string]string
}

func newChain(t *testing.T) chain {
	t.Helper()
	home := tempDir(t)
	c := chain{home: home, pathDir: filepath.Join(home, ".local", "bin")}
	proj := filepath.Join(home, "proj")
	c.script = filepath.Join(proj, "node_modules", "evil", "server.py")
	writeFiles(t, home, map[string]string{
		".local/bin/.keep":                ".",
		".hop/.keep":                      ".",
		"proj/node_modules/.bin/.keep":    ".",
		"proj/node_modules/evil/.keep":    ".",
		"proj/node_modules/evil/README":   "evil",
		"proj/node_modules/.package-lock": "{}",
	})
	must(t, os.WriteFile(c.script, []byte(evilMCP), 0o755))
	// ~/.local/bin/evil-mcp -> ../../.hop/evil-mcp (relative)
	// ~/.hop/evil-mcp -> ~/alias/node_modules/.bin/evil-mcp
	// ~/alias -> ~/proj (a linked directory)
	// ~/proj/node_modules/.bin/evil-mcp -> ../evil/server.py
	first := filepath.Join(c.pathDir, "evil-mcp")
	mid := filepath.Join(home, ".hop", "evil-mcp")
	bin := filepath.Join(home, "alias", "node_modules", ".bin", "evil-mcp")
	must(t, os.Symlink("../../.hop/evil-mcp", first))
	must(t, os.Symlink(bin, mid))
	must(t, os.Symlink(proj, filepath.Join(home, "alias")))
	must(t, os.Symlink("../evil/server.py", filepath.Join(proj, "node_modules", ".bin", "evil-mcp")))
	c.hops = []string{first, mid, filepath.Join(home, "alias"), bin}
	c.secretPaths = map[string]string{"pathdir": filepath.Join(c.pathDir, "secret.txt"),
		"hop": filepath.Join(home, ".hop", "secret.txt"), "home": filepath.Join(home, "secret.txt")}
	c.secrets = map[string]string{}
	for name, p := range c.secretPaths {
		c.secrets[p] = "LINKCHAIN-SECRET-" + strings.ToUpper(name) + "-" + canary[6:14]
	}
	for p, s := range c.secrets {
		must(t, os.WriteFile(p, []byte(s), 0o600))
	}
	return c
}

// run has the server's tool run cmd (its output in out.txt of the
// workspace) in a run where massgen starts the server by its name, found
// in the PATH entry, with HOME the chain's home.
func (c chain) run(t *testing.T, dir, cmd string) (string, result) {
	t.Helper()
	return c.runFrom(t, dir, c.pathDir, cmd)
}

// runFrom is run with pathDir as the PATH entry holding the server's
// first link.
func (c chain) runFrom(t *testing.T, dir, pathDir, cmd string) (string, result) {
	t.Helper()
	s := team{mcp: map[string]any{"evil": map[string]any{"command": "evil-mcp", "args": []string{""}}},
		coord: []call{mcpRun(probeWrap(cmd))}}
	r := runTeam(t, dir, s, runOpts{env: []string{"HOME=" + c.home, "PATH=" + pathDir + ":" + os.Getenv("PATH")}})
	if _, ran := wsFile(dir, "ran.txt"); !ran {
		t.Fatalf("the server behind the links did not run the attack:\n%s", r)
	}
	out, _ := wsFile(dir, "out.txt")
	t.Logf("output: %s", tail(out, 1500))
	return out, r
}

// A program reached through a chain of links (commit 87f2c07: every hop
// is bound read-only for the kernel to follow it) is a hostile MCP server
// here: from inside its sandbox it writes into each hop's directory and
// through the links, reads the user's files lying beside the hops, and
// replaces a hop. Each is refused, the home is byte-for-byte the same,
// and no secret reaches the run's files or output.
func TestLinkChainProgram(t *testing.T) {
	needBwrap(t)
	needPython(t)
	attempt(t, "mcp via a link chain: writes into each hop's directory and through the links", func(t *testing.T) {
		t.Parallel()
		c, dir := newChain(t), tempDir(t)
		before := snap(t, c.home)
		var cmd []string
		for _, d := range []string{c.pathDir, filepath.Join(c.home, ".hop"), filepath.Join(c.home, "proj", "node_modules", ".bin"),
			filepath.Dir(c.script), filepath.Join(c.home, "proj"), filepath.Join(c.home, "alias")} {
			cmd = append(cmd, "echo x > "+d+"/planted && echo WROTE "+d, "mkdir "+d+"/newdir && echo WROTE-DIR "+d)
		}
		// The home itself is not shown: in the sandbox its path is
		// bubblewrap's scaffolding for the binds, on a throwaway tmpfs,
		// so a write there may succeed and vanish; the fingerprint of the
		// real one says whether it did more.
		cmd = append(cmd, "echo x > "+c.home+"/planted", "mkdir "+c.home+"/newdir")
		for _, f := range append(c.hops, c.script, filepath.Join(c.home, ".hop", "secret.txt")) {
			cmd = append(cmd, "echo '#pwned' >> "+f+" && echo WROTE-THROUGH "+f, "touch -h "+f+" && echo TOUCHED "+f)
		}
		cmd = append(cmd, "chmod 0777 "+filepath.Join(c.home, ".hop")+" && echo CHMOD", "echo looked")
		out, r := c.run(t, dir, strings.Join(cmd, "; "))
		if !strings.Contains(out, "looked") {
			t.Fatalf("the attack did not finish: %s", out)
		}
		for _, w := range []string{"WROTE", "TOUCHED", "CHMOD"} {
			if strings.Contains(out, w) {
				t.Errorf("a write got through:\n%s", out)
				break
			}
		}
		unchanged(t, "the home holding the links", c.home, before)
		noCanary(t, r)
	})
	// What the server may read of the home: its program's own files. The
	// home's other files, beside a hop or not, are the user's: a link is
	// made again in the sandbox, in a directory holding only the links
	// (before, each hop's whole directory was shown).
	for name, secret := range map[string]string{
		"reads the home around the hops":                                    "home",
		"reads a file beside the link in a hidden directory (a middle hop)": "hop",
		"reads a file beside the PATH entry's link":                         "pathdir",
	} {
		attempt(t, "mcp via a link chain: "+name, func(t *testing.T) {
			t.Parallel()
			c, dir := newChain(t), tempDir(t)
			before := snap(t, c.home)
			p := c.secretPaths[secret]
			cmd := []string{"cat " + p, "ls -la " + filepath.Dir(p)}
			if secret == "home" {
				// The home again, through the linked directory.
				cmd = append(cmd, "cat "+filepath.Join(c.home, "alias", "..", "secret.txt"), "ls -la "+filepath.Join(c.home, "alias", ".."))
			}
			cmd = append(cmd, "echo looked")
			out, r := c.run(t, dir, strings.Join(cmd, "; "))
			if !strings.Contains(out, "looked") {
				t.Fatalf("the attack did not finish: %s", out)
			}
			if strings.Contains(out, c.secrets[p]) {
				t.Errorf("the server read %s, beside a hop of its link chain", p)
			}
			noSecret(t, c.secrets[p], r)
			unchanged(t, "the home holding the links", c.home, before)
			noCanary(t, r)
		})
	}
	// The links' directories are made in the sandbox as read-only tmpfs
	// holding only the links, remounted read-only after every other mount:
	// here the first link lies in the directory that holds the run, so
	// the agent's workspace is mounted inside that tmpfs. The server still
	// writes its workspace (runFrom checks ran.txt), and sees nothing of
	// the directory's own files, nor writes there, nor replaces the link.
	attempt(t, "mcp via a link chain: the first link beside the run's own directory", func(t *testing.T) {
		t.Parallel()
		c, dir := newChain(t), tempDir(t)
		first := filepath.Join(dir, "evil-mcp")
		must(t, os.Symlink(c.hops[1], first))
		beside := filepath.Join(dir, "beside.txt")
		secret := "LINKCHAIN-SECRET-RUNDIR-" + canary[6:14]
		must(t, os.WriteFile(beside, []byte(secret), 0o600))
		before := snap(t, c.home)
		out, r := c.runFrom(t, dir, dir, strings.Join([]string{
			"cat " + beside, "ls -la " + dir,
			"echo x > " + dir + "/planted && echo WROTE",
			"ln -sfn /bin/sh " + first + " && echo REPLACED",
			"echo looked",
		}, "; "))
		if !strings.Contains(out, "looked") {
			t.Fatalf("the attack did not finish: %s", out)
		}
		if strings.Contains(out, secret) {
			t.Error("the server read a file beside its first link")
		}
		for _, w := range []string{"WROTE", "REPLACED"} {
			if strings.Contains(out, w) {
				t.Errorf("a write beside the first link got through:\n%s", out)
				break
			}
		}
		if _, err := os.Lstat(filepath.Join(dir, "planted")); err == nil {
			t.Error("the server planted a file beside its first link on the host")
		}
		if got, err := os.Readlink(first); err != nil || got != c.hops[1] {
			t.Errorf("the first link now says %q (%v), want %q", got, err, c.hops[1])
		}
		if b, err := os.ReadFile(beside); err != nil || string(b) != secret {
			t.Errorf("the file beside the first link changed: %q, %v", b, err)
		}
		// Nowhere in the run's output or files but its own file.
		if strings.Contains(r.stdout+r.stderr, secret) {
			t.Error("the secret beside the first link is in massgen's output")
		}
		for _, h := range grepTree(dir, secret) {
			if h != beside {
				t.Errorf("the secret beside the first link is in %s", h)
			}
		}
		unchanged(t, "the home holding the links", c.home, before)
		noCanary(t, r)
	})
	attempt(t, "mcp via a link chain: replaces a hop", func(t *testing.T) {
		t.Parallel()
		c, dir := newChain(t), tempDir(t)
		before := snap(t, c.home)
		cmd := []string{
			"ln -sfn /bin/sh " + c.hops[1] + " && echo REPLACED mid",
			"mv " + c.hops[3] + " " + c.hops[3] + ".gone && echo REPLACED bin",
			"rm -f " + c.hops[0] + " && echo REPLACED first",
			"ln -sfn / " + c.hops[2] + " && echo REPLACED alias",
			"python3 -c 'import os,sys; os.symlink(\"/\", sys.argv[1] + \".new\"); os.replace(sys.argv[1] + \".new\", sys.argv[1])' " + c.hops[2] + " && echo REPLACED alias by rename",
			"echo looked",
		}
		out, r := c.run(t, dir, strings.Join(cmd, "; "))
		if !strings.Contains(out, "looked") {
			t.Fatalf("the attack did not finish: %s", out)
		}
		if strings.Contains(out, "REPLACED") {
			t.Errorf("a hop was replaced:\n%s", out)
		}
		unchanged(t, "the home holding the links", c.home, before)
		noCanary(t, r)
	})
}
