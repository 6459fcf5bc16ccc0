// Package dockertest gives tests a real Docker engine and a small image
// made on the spot (no registry is reachable here): a static busybox, with
// stand-in package managers (pip, npm, apt-get) that record what they were
// asked to install. A test skips
// when no engine answers, except under CI=true, where .ci/run starts one
// and its absence is a failure.
package dockertest

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/moby/moby/client"
)

// Installer is a stand-in package manager of the image (pip, npm,
// apt-get): it appends its name and arguments to /var/log/installs and
// fails for a package named "broken".
const Installer = `#!/bin/sh
echo "$(basename "$0") $*" >> /var/log/installs
for a in "$@"; do [ "$a" = broken ] && { echo "ERROR: No matching distribution found for broken" >&2; exit 1; }; done
exit 0
`

// Engine is a client of the engine DOCKER_HOST names (or the local
// socket), or skips t.
func Engine(t testing.TB) *client.Client {
	t.Helper()
	cli, err := connect()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no Docker engine answers, and CI starts one (.ci/run): %v", err)
		}
		t.Skipf("no Docker engine answers (%v); .ci/run installs and starts one", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// Answers reports whether a Docker engine answers here.
func Answers() bool {
	cli, err := connect()
	if err == nil {
		cli.Close()
	}
	return err == nil
}

// connect is a client of the engine, once it has answered a ping.
func connect() (*client.Client, error) {
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		cli.Close()
		return nil, err
	}
	return cli, nil
}

// Image makes (once per engine and content) and names the test image.
func Image(t testing.TB) string {
	t.Helper()
	cli := Engine(t)
	bb := busybox(t)
	layer := rootfs(t, bb)
	sum := sha256.Sum256(layer)
	name := "massgen-test/busybox:" + hex.EncodeToString(sum[:6])
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := cli.ImageInspect(ctx, name); err == nil {
		return name
	}
	res, err := cli.ImageImport(ctx, client.ImageImportSource{Source: bytes.NewReader(layer), SourceName: "-"}, name,
		client.ImageImportOptions{Changes: []string{"ENV PATH=/usr/local/bin:/bin"}})
	if err != nil {
		t.Fatalf("import the test image: %v", err)
	}
	io.Copy(io.Discard, res)
	res.Close()
	if _, err := cli.ImageInspect(ctx, name); err != nil {
		t.Fatalf("the imported test image %s is not there: %v", name, err)
	}
	return name
}

// busybox is a statically linked busybox of the host's (Debian's
// busybox-static), which runs in an image with nothing else.
func busybox(t testing.TB) []byte {
	t.Helper()
	for _, p := range []string{"/bin/busybox", "/usr/bin/busybox"} {
		if path, err := exec.LookPath(p); err == nil {
			f, err := elf.Open(path)
			if err != nil {
				continue
			}
			static := true
			for _, prog := range f.Progs {
				static = static && prog.Type != elf.PT_INTERP
			}
			f.Close()
			if static {
				b, err := os.ReadFile(path)
				if err == nil {
					return b
				}
			}
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no static busybox for the test image; .ci/run installs busybox-static")
	}
	t.Skip("no static busybox for the test image (Debian: apt-get install busybox-static)")
	return nil
}

// rootfs is the image's one layer, as a tar.
func rootfs(t testing.TB, bb []byte) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(name string, mode int64) {
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: mode})
	}
	file := func(name string, mode int64, data []byte) {
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data))})
		tw.Write(data)
	}
	for _, d := range []string{"bin/", "etc/", "usr/", "usr/local/", "usr/local/bin/", "var/", "var/log/", "root/"} {
		dir(d, 0o755)
	}
	dir("tmp/", 0o1777)
	file("bin/busybox", 0o755, bb)
	for _, c := range []string{"sh", "ls", "cat", "echo", "mkdir", "touch", "ln", "rm", "pwd", "id", "wget", "sleep",
		"grep", "test", "env", "nc", "tr", "readlink", "mount", "ps", "kill", "head", "wc", "printf", "true", "false", "stat"} {
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + c, Linkname: "busybox", Mode: 0o777})
	}
	for _, m := range []string{"pip", "npm", "apt-get"} {
		file("usr/local/bin/"+m, 0o755, []byte(Installer))
	}
	file("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/sh\n"))
	file("etc/group", 0o644, []byte("root:x:0:\n"))
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
