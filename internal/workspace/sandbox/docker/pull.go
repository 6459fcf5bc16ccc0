package docker

// Docker mode's image: pulled from the start of the run when the engine
// lacks it, waited for by the commands.

import (
	"context"
	"fmt"

	"github.com/moby/moby/client"
)

// pulling is a pull of the image, started as the run starts (a large
// image takes longer than one command may wait) and bounded by
// pullTimeout, not by any command.
type pulling struct {
	done   chan struct{}
	err    error // once done
	cancel context.CancelFunc
}

func (b *dockerBox) startPull() *pulling {
	ctx, cancel := context.WithTimeout(context.Background(), pullTimeout)
	p := &pulling{done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(p.done)
		defer cancel()
		resp, err := b.cli.ImagePull(ctx, b.cfg.Image, client.ImagePullOptions{})
		if err == nil {
			err = resp.Wait(ctx)
		}
		p.err = err
	}()
	return p
}

// pullLocked waits, as long as ctx lets it, for the image's pull (starting
// one when the image went missing since, or the last pull failed).
func (b *dockerBox) pullLocked(ctx context.Context) error {
	if b.fresh {
		return nil
	}
	if b.pull == nil {
		if _, err := b.cli.ImageInspect(ctx, b.cfg.Image); err == nil {
			b.fresh = true
			return nil
		}
		b.pull = b.startPull()
	}
	select {
	case <-b.pull.done:
	case <-ctx.Done():
		return fmt.Errorf("Docker image %s is still being pulled; run the command again in a while", b.cfg.Image)
	}
	if err := b.pull.err; err != nil {
		b.pull = nil // the next command tries again
		return fmt.Errorf("Docker image %s is not on the engine and cannot be pulled: %v; pull or build it first "+
			"(docker pull %s), or name another in command_line_docker_image", b.cfg.Image, err, b.cfg.Image)
	}
	b.fresh = true
	return nil
}
