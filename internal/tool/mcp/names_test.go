package mcp

import (
	"errors"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestToolNamesAreUpstreamsAndNeverAmbiguous(t *testing.T) {
	if got := ToolName("everything", "get-sum"); got != "mcp__everything__get-sum" {
		t.Errorf("plain name = %q", got)
	}
	// '__' in a tool name is kept: calls are routed by table, not by parsing.
	if got := ToolName("srv", "a__b"); got != "mcp__srv__a__b" {
		t.Errorf("name with __ = %q", got)
	}
	// Characters providers refuse become '_', with a hash of the raw name,
	// so "a.b" and "a_b" (or "a b") stay apart.
	dot, under, space := ToolName("srv", "a.b"), ToolName("srv", "a_b"), ToolName("srv", "a b")
	if dot == under || dot == space || space == under || !strings.HasPrefix(dot, "mcp__srv__a_b_") {
		t.Errorf("a.b → %q, a_b → %q, a b → %q: want distinct names", dot, under, space)
	}
	long1, long2 := ToolName("srv", strings.Repeat("x", 80)+"1"), ToolName("srv", strings.Repeat("x", 80)+"2")
	if len(long1) > maxName || long1 == long2 {
		t.Errorf("long names %q and %q: want ≤ %d characters and distinct", long1, long2, maxName)
	}
}

func TestBreakerOpensAfterFailuresAndClosesOnSuccess(t *testing.T) {
	b := breaker{max: 2, cooldown: time.Minute}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	boom := errors.New("connection closed")
	b.record(now, boom)
	if err := b.allow(now); err != nil {
		t.Fatalf("open after one failure: %v", err)
	}
	b.record(now, boom)
	if err := b.allow(now.Add(time.Second)); err == nil || !strings.Contains(err.Error(), "paused after 2 failures in a row") {
		t.Fatalf("allow after two failures = %v, want paused", err)
	}
	if err := b.allow(now.Add(2 * time.Minute)); err != nil {
		t.Fatalf("still open after the cooldown: %v", err)
	}
	b.record(now, nil)
	b.record(now, boom)
	if err := b.allow(now); err != nil {
		t.Fatalf("a success did not reset the count: %v", err)
	}
}

func TestCapTextCutsOnARuneAndSaysSo(t *testing.T) {
	s := strings.Repeat("é", 10) // 20 bytes
	got := capText(s, 5)
	if !strings.HasPrefix(got, "éé\n[result truncated: showing the first 4 bytes of 20 bytes; 16 bytes cut]") {
		t.Errorf("capText = %q", got)
	}
	if capText("short", 5) != "short" {
		t.Error("a result within the cap was changed")
	}
}

func TestOversizedImageIsDescribedOnly(t *testing.T) {
	res := &sdk.CallToolResult{Content: []sdk.Content{
		&sdk.ImageContent{MIMEType: "image/jpeg", Data: make([]byte, maxImage+1)},
		&sdk.ImageContent{Data: []byte("\x89PNG small")},
	}}
	got := render(res, 1<<20)
	if len(got.Images) != 1 || got.Images[0].MIME != "image/png" || string(got.Images[0].Data) != "\x89PNG small" {
		t.Errorf("images = %+v, want only the small one, typed image/png", got.Images)
	}
	if !strings.Contains(got.Content, "[image: image/jpeg, 5.0 MiB] (not shown: larger than the 5.0 MiB limit for images)") {
		t.Errorf("content %q does not say the big image was not shown", got.Content)
	}
}
