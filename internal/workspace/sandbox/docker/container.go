package docker

// Docker mode's container: made with the guard's mounts, its packages
// installed, held open by massgen, removed when done.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/massgen/massgen/internal/workspace"
)

// container is the agent's live container, made with the guard's mounts
// of this moment: when they change (the write context paths open for the
// final presentation) the old one goes and a new one is made.
func (b *dockerBox) container(ctx context.Context) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	mounts := slices.Concat(dockerMounts(b.g.Mounts()), b.binds, b.extra)
	sig := fmt.Sprint(mounts)
	if b.id != "" && b.made == sig {
		return b.id, nil
	}
	b.removeLocked()
	if err := b.pullLocked(ctx); err != nil {
		return "", err
	}
	var name [4]byte
	rand.Read(name[:])
	cfg := &container.Config{
		Image: b.cfg.Image,
		// Waits until massgen lets go of its input (see the file comment).
		Entrypoint: []string{"/bin/sh", "-c", "while read -r _; do :; done"},
		Cmd:        []string{},
		Env:        b.env, WorkingDir: b.g.Workspace(),
		OpenStdin: true, StdinOnce: true, AttachStdin: true,
		Labels: map[string]string{"massgen.agent": b.g.Agent()},
	}
	pids := int64(pidsLimit)
	host := &container.HostConfig{
		Mounts:      mounts,
		Tmpfs:       map[string]string{"/tmp": "mode=1777"},
		NetworkMode: container.NetworkMode(b.cfg.Network),
		AutoRemove:  true,
		Resources: container.Resources{Memory: b.cfg.Memory, NanoCPUs: int64(b.cfg.CPUs * 1e9),
			PidsLimit: &pids},
	}
	if !b.cfg.Sudo {
		host.CapDrop = []string{"ALL"}
		host.SecurityOpt = []string{"no-new-privileges"}
	}
	if b.cfg.Network == "none" {
		profile, err := offlineProfile()
		if err != nil {
			return "", fmt.Errorf("docker mode: the seccomp profile without unix sockets: %w", err)
		}
		host.SecurityOpt = append(host.SecurityOpt, "seccomp="+profile)
	}
	made, err := b.cli.ContainerCreate(ctx, client.ContainerCreateOptions{Config: cfg, HostConfig: host,
		Name: "massgen-" + containerName(b.g.Agent()) + "-" + hex.EncodeToString(name[:])})
	if err != nil {
		return "", fmt.Errorf("cannot create the Docker container of agent %s from %s: %w", b.g.Agent(), b.cfg.Image, err)
	}
	hold, err := b.cli.ContainerAttach(ctx, made.ID, client.ContainerAttachOptions{Stream: true, Stdin: true})
	if err == nil {
		_, err = b.cli.ContainerStart(ctx, made.ID, client.ContainerStartOptions{})
	}
	if err != nil {
		if hold.Conn != nil {
			hold.Close()
		}
		b.removeID(made.ID)
		return "", fmt.Errorf("cannot start the Docker container of agent %s from %s: %w", b.g.Agent(), b.cfg.Image, err)
	}
	b.id, b.made, b.hold = made.ID, sig, &hold.HijackedResponse
	if err := b.installLocked(ctx); err != nil {
		b.removeLocked()
		return "", err
	}
	if err := b.startEndpointsLocked(ctx); err != nil {
		b.removeLocked()
		return "", err
	}
	return b.id, nil
}

// installLocked installs the configured packages in the new container.
func (b *dockerBox) installLocked(ctx context.Context) error {
	p := b.cfg.Packages
	for _, s := range []struct {
		key, cmd string
		pkgs     []string
	}{
		{"system", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq", p.System},
		{"python", "pip install -q", p.Python},
		{"npm", "npm install -g --silent", p.NPM},
	} {
		if len(s.pkgs) == 0 {
			continue
		}
		line := s.cmd + " " + shellQuote(s.pkgs)
		ctx, cancel := context.WithTimeout(ctx, installTimeout)
		out := &capped{max: 4000}
		exit, _, err := b.exec(ctx, b.id, "0:0", "/", []string{"/bin/sh", "-c", line}, out)
		cancel()
		if err == nil && exit != 0 {
			err = fmt.Errorf("exit code %d: %s", exit, strings.TrimSpace(out.buf.String()))
		}
		if err != nil {
			return fmt.Errorf("command_line_docker_packages %s: %s failed in the container of agent %s: %v", s.key, line, b.g.Agent(), err)
		}
	}
	return nil
}

// reset removes container id if it is still the agent's.
func (b *dockerBox) reset(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.id == id {
		b.removeLocked()
	}
}

func (b *dockerBox) removeLocked() {
	if b.id == "" {
		return
	}
	b.hold.Close()
	b.stopEndpoints(false)
	b.removeID(b.id)
	b.id, b.made, b.hold = "", "", nil
}

// removeID kills and removes a container, within removeTimeout, and
// returns once it is gone: with AutoRemove the engine may be removing it
// already (its hold just closed), and then ContainerRemove answers at once
// with a conflict while the container is still there.
func (b *dockerBox) removeID(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
	defer cancel()
	_, err := b.cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true})
	if err == nil || cerrdefs.IsNotFound(err) {
		return
	}
	w := b.cli.ContainerWait(ctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionRemoved})
	select {
	case <-w.Result:
	case <-w.Error: // gone already (not found), or the time is up
	}
}

// Close stops a pull in flight, removes the container and lets go of the
// engine.
func (b *dockerBox) Close() {
	b.mu.Lock()
	b.removeLocked()
	if p := b.pull; p != nil {
		p.cancel()
		<-p.done
	}
	b.mu.Unlock()
	b.stopEndpoints(true)
	b.cli.Close()
}

// dockerMounts are the guard's mounts as the engine's, each at its own
// path; the engine mounts outer paths first, as bubblewrap is given them.
// The engine refuses two mounts at one path (a protected path may be
// listed twice): the later one, which bubblewrap would lay on top, takes
// the earlier's place (the engine orders mounts by their paths anyway).
func dockerMounts(ms []workspace.Mount) []mount.Mount {
	var out []mount.Mount
	at := map[string]int{}
	for _, m := range ms {
		var mm mount.Mount
		switch m.Access {
		case workspace.Write:
			mm = mount.Mount{Type: mount.TypeBind, Source: m.Path, Target: m.Path}
		case workspace.Read:
			mm = mount.Mount{Type: mount.TypeBind, Source: m.Path, Target: m.Path, ReadOnly: true}
		default:
			if fi, err := os.Stat(m.Path); err == nil && fi.IsDir() {
				mm = mount.Mount{Type: mount.TypeTmpfs, Target: m.Path}
			} else {
				mm = mount.Mount{Type: mount.TypeBind, Source: os.DevNull, Target: m.Path, ReadOnly: true}
			}
		}
		if i, ok := at[m.Path]; ok {
			out[i] = mm
			continue
		}
		at[m.Path] = len(out)
		out = append(out, mm)
	}
	return out
}

var unsafeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-zA-Z0-9_.-]+`) })

// containerName is an agent id as the engine accepts it in a name.
func containerName(agent string) string {
	s := strings.Trim(unsafeName().ReplaceAllString(agent, "-"), "-._")
	if s == "" {
		s = "agent"
	}
	return s
}

// shellQuote quotes each word for sh.
func shellQuote(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// capped keeps the first max bytes written to it (an install's output,
// quoted when it fails).
type capped struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
