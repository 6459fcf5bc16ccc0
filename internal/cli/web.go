package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/server"
	"github.com/massgen/massgen/internal/webui"
)

// webFlags are massgen --web's (upstream's names).
type webFlags struct {
	on        bool
	host      string
	port      string
	noBrowser bool
	configDir string
}

func (f *webFlags) register(fl interface {
	BoolVar(*bool, string, bool, string)
	StringVar(*string, string, string, string)
}) {
	fl.BoolVar(&f.on, "web", false, "open the Web UI in a browser instead of running a question in the terminal (docs/webui.md)")
	fl.StringVar(&f.host, "web-host", "127.0.0.1", "with --web: `HOST` to listen on (anything but loopback lets other machines in, with the token)")
	fl.StringVar(&f.port, "web-port", "8000", "with --web: `PORT` to listen on (0: any free port)")
	fl.BoolVar(&f.noBrowser, "no-browser", false, "with --web: print the address, do not open a browser")
	fl.StringVar(&f.configDir, "web-config-dir", "", "with --web: `DIR` whose *.yaml files the page offers besides the shipped examples")
}

// webConfigs are the configs the page offers: the shipped examples by
// @examples/NAME, the files of dir by name, and the --config given, so
// that it is preselected.
func webConfigs(dir, config, workDir string) (func() map[string]string, string, error) {
	source, err := ServeConfigSource(dir)
	if err != nil {
		return nil, "", err
	}
	def := ""
	extra := map[string]string{}
	if config != "" {
		def = config
		if !strings.HasPrefix(config, "@") {
			if !filepath.IsAbs(config) {
				config = filepath.Join(workDir, config)
			}
			def = filepath.Base(config)
		}
		extra[def] = config
	}
	return func() map[string]string {
		out := map[string]string{}
		for name, src := range source() {
			name = strings.TrimPrefix(name, server.DefaultModel+"/")
			if strings.HasPrefix(src, "@") {
				name = src
			}
			out[name] = src
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}, def, nil
}

// runWeb is massgen --web: the Web UI alone, on 127.0.0.1 by default,
// behind a token made for this launch and handed to the browser in the
// fragment of the address it opens (never sent in a request line, so no
// log or Referer carries it).
func runWeb(ctx context.Context, env *Env, rq app.Request, f webFlags) error {
	if env.WorkDir == "" {
		env.WorkDir, _ = os.Getwd()
	}
	configs, def, err := webConfigs(f.configDir, rq.Config, env.WorkDir)
	if err != nil {
		return usageErr("--web-config-dir: %v", err)
	}
	var b [24]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	logger := slog.New(slog.NewTextHandler(&syncWriter{w: env.Stderr}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	hosts := server.NewHostPolicy(f.host, nil)
	ui := webui.New(webui.Deps{Env: serverEnv(env), Configs: configs, DefaultConfig: def, LogDir: rq.LogDir,
		Token: token, AllowHost: hosts.Allows, Version: app.Version, Logger: logger})
	mux := http.NewServeMux()
	mux.Handle("/ui/", ui.Handler("/ui"))
	mux.Handle("/ui", ui.Handler("/ui"))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" || !hosts.Allows(r.Host) {
			http.NotFound(w, r)
			return
		}
		http.Redirect(w, r, "/ui/", http.StatusFound)
	})
	ln, err := net.Listen("tcp", net.JoinHostPort(f.host, f.port))
	if err != nil {
		return &exitError{code: ExitExecution, err: fmt.Errorf("--web: cannot listen: %w", err)}
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()

	addr := ln.Addr().(*net.TCPAddr)
	host := f.host
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() || host == "" {
		host = "127.0.0.1"
	}
	url := fmt.Sprintf("http://%s/ui/#token=%s", net.JoinHostPort(host, fmt.Sprint(addr.Port)), token)
	fmt.Fprintf(env.Stderr, "massgen web UI: %s\n", url)
	fmt.Fprintln(env.Stderr, "massgen web UI: the address carries this launch's token; Ctrl+C stops the server and its runs")
	if !server.IsLoopback(f.host) {
		fmt.Fprintf(env.Stderr, "massgen web UI: listening on %s: other machines can reach it (with the token)\n", ln.Addr())
	}
	if !f.noBrowser {
		openBrowser(ctx, env, url)
	}

	select {
	case <-ctx.Done():
	case err := <-served:
		return &exitError{code: ExitExecution, err: fmt.Errorf("web UI stopped: %w", err)}
	}
	fmt.Fprintln(env.Stderr, "massgen web UI: stopping; runs in flight are cancelled")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := ui.Shutdown(sctx); err != nil {
		fmt.Fprintf(env.Stderr, "massgen web UI: %v\n", err)
	}
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return &exitError{code: ExitExecution, err: err}
	}
	return nil
}

// openBrowser opens url with the desktop's opener, when there is one; the
// address is printed anyway.
func openBrowser(ctx context.Context, env *Env, url string) {
	for _, opener := range []string{"xdg-open", "open"} {
		if p, err := exec.LookPath(opener); err == nil {
			cmd := exec.CommandContext(context.WithoutCancel(ctx), p, url)
			if err := cmd.Start(); err == nil {
				go func() { _ = cmd.Wait() }()
				return
			}
		}
	}
	fmt.Fprintln(env.Stderr, "massgen web UI: no browser opener found (xdg-open, open): open the address above")
}
