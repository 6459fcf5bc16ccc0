package mcp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/massgen/massgen/internal/redact"
)

// Each stdio server's stderr goes to a log file of its own in the pool's
// log directory (a run's, or a temporary one removed by Close), written as
// it runs, so that a run that crashes keeps it; CopyLogs copies them into a
// run's log directory when they were kept elsewhere.

// placeLog gives a stdio server its stderr log file in the pool's log
// directory.
func (p *Pool) placeLog(s *server) error {
	if s.cfg.Type != Stdio || s.logPath != "" {
		return nil
	}
	if err := p.ensureLogDir(); err != nil {
		return err
	}
	s.logPath = p.logFile(s.cfg.Name)
	return nil
}

func (p *Pool) ensureLogDir() error {
	if p.logDir != "" {
		return nil
	}
	if p.opts.LogDir != "" {
		if err := os.MkdirAll(p.opts.LogDir, 0o755); err != nil {
			return fmt.Errorf("MCP server logs: %w", err)
		}
		p.logDir = p.opts.LogDir
		return nil
	}
	d, err := os.MkdirTemp("", "massgen-mcp-")
	if err != nil {
		return fmt.Errorf("MCP server logs: %w", err)
	}
	p.logDir, p.tmpDir = d, true
	return nil
}

// logFile is mcp_<name>_stderr.log, numbered when two configs share a name.
func (p *Pool) logFile(name string) string {
	path := filepath.Join(p.logDir, "mcp_"+sanitize(name)+"_stderr.log")
	for i := 2; p.logTaken(path); i++ {
		path = filepath.Join(p.logDir, fmt.Sprintf("mcp_%s_%d_stderr.log", sanitize(name), i))
	}
	return path
}

func (p *Pool) logTaken(path string) bool {
	for _, s := range p.servers {
		if s.logPath == path {
			return true
		}
	}
	return false
}

// StderrLogs are the stderr log files of the stdio servers, by server name.
func (p *Pool) StderrLogs() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]string{}
	for _, s := range p.servers {
		if s.logPath != "" {
			out[s.cfg.Name] = s.logPath
		}
	}
	return out
}

// CopyLogs copies the stderr logs into dir (a run's log directory) under
// their own names; a log not written yet is skipped.
func (p *Pool) CopyLogs(dir string) error {
	var errs []error
	for _, path := range p.logPaths() {
		if filepath.Dir(path) == filepath.Clean(dir) {
			continue
		}
		errs = append(errs, copyFile(path, filepath.Join(dir, filepath.Base(path))))
	}
	return errors.Join(errs...)
}

// logPaths are the stderr log files of every stdio server the pool has
// had: two agents' servers of the same name each have their own.
func (p *Pool) logPaths() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, s := range p.servers {
		if s.logPath != "" {
			out = append(out, s.logPath)
		}
	}
	return out
}

// maskLog masks, once its server has stopped, the secrets a server wrote
// to its stderr log (a token from its env, printed as it failed), as
// massgen's own errors are (redact). The server writes the file itself
// while it runs, so until then it is as the server wrote it.
func maskLog(path string) {
	if path == "" {
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	if m := redact.String(string(b)); m != string(b) {
		_ = os.WriteFile(path, []byte(m), 0o644)
	}
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(in)
	if err == nil {
		_, err = out.WriteString(redact.String(string(b))) // the log may still be live: masked here too
	}
	return errors.Join(err, out.Close())
}
