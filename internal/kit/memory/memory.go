package memory

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/massgen/massgen/internal/workspace"
)

// The layout inside a workspace.
const (
	Dir       = "memory"
	ShortTerm = "short_term"
	LongTerm  = "long_term"
	// Memo is the verification replay memo, in short_term: the one file
	// verification_and_final_only lets agents write during the rounds.
	Memo = "verification_latest.md"
)

// Tiers are the memory's subdirectories.
var Tiers = []string{ShortTerm, LongTerm}

// Mode is a learning_capture_mode: when agents may write memories.
type Mode string

// The modes of v0.1.73 (§9.3 of the behaviour reference).
const (
	Round                Mode = "round"                       // during rounds and at presentation
	VerificationAndFinal Mode = "verification_and_final_only" // the memo during rounds, the rest at presentation
	FinalOnly            Mode = "final_only"                  // only the winner, at presentation
)

// Capture is the mode in effect: the configured one (""is round), except
// that a final-only mode falls back to round when there will be no final
// presentation to capture in, unless noFallback
// (disable_final_only_round_capture_fallback).
func Capture(configured string, presents, noFallback bool) Mode {
	m := Mode(configured)
	if m == "" {
		return Round
	}
	if m != Round && !presents && !noFallback {
		return Round
	}
	return m
}

// Policy is what an agent's Guard adds for memory: the memory directory as
// a write context path (read-only during the rounds, writable by the
// winner in the final presentation) and the files that stay writable.
type Policy struct {
	Context  []workspace.ContextPath
	Writable []string
}

// Prepare makes memory/short_term and memory/long_term in the workspace ws
// and returns what its Guard must add under mode m: nothing in round mode;
// the memory directory closed for the rounds otherwise, with the memo
// (made empty when absent) left open in verification_and_final_only.
func Prepare(ws string, m Mode) (Policy, error) {
	g, err := own(ws)
	if err != nil {
		return Policy{}, err
	}
	for _, t := range Tiers {
		if _, err := g.Mkdir(filepath.Join(Dir, t)); err != nil {
			return Policy{}, fmt.Errorf("memory: %w", err)
		}
	}
	var p Policy
	if m == Round {
		return p, nil
	}
	p.Context = []workspace.ContextPath{{Path: filepath.Join(g.Workspace(), Dir), Write: true}}
	if m == VerificationAndFinal {
		memo := filepath.Join(Dir, ShortTerm, Memo)
		if _, _, _, err := g.Peek(memo, 1); errors.Is(err, fs.ErrNotExist) {
			if _, _, err := g.WriteFile(memo, nil); err != nil {
				return Policy{}, fmt.Errorf("memory: %w", err)
			}
		} else if err != nil {
			return Policy{}, fmt.Errorf("memory: %w", err)
		}
		p.Writable = []string{filepath.Join(g.Workspace(), memo)}
	}
	return p, nil
}

// own is massgen's own Guard over a workspace, for the files it writes
// there itself: the same rules as an agent's (no link followed out of it),
// with the whole workspace writable.
func own(ws string) (*workspace.Guard, error) {
	g, err := workspace.New(workspace.Policy{Agent: "massgen (memory)", Workspace: ws})
	if err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	return g, nil
}
