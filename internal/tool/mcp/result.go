package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// maxImage is the largest image passed on to a provider as an image:
// Anthropic refuses images over 5 MB, and a bigger one would cost a whole
// request for a picture the model never sees. A larger one is described only.
const maxImage = 5 << 20

// render turns a call's result into text for the model: text as it is,
// structured content as JSON (when the text does not already carry it),
// images and audio described by type and size, embedded resources
// inlined when they are text and described when they are binary, links
// named. Past limit bytes the text is cut, with a note saying how much.
// Images up to maxImage also go in Images, for the providers that accept
// them in a tool result; the text describes them either way.
func render(res *sdk.CallToolResult, limit int) tool.Result {
	var parts []string
	var images []llm.Image
	for _, c := range res.Content {
		text := renderContent(c)
		if img, ok := c.(*sdk.ImageContent); ok {
			if len(img.Data) > maxImage {
				text += fmt.Sprintf(" (not shown: larger than the %s limit for images)", size(maxImage))
			} else if len(img.Data) > 0 {
				images = append(images, llm.Image{MIME: orUnknownImage(img.MIMEType), Data: img.Data})
			}
		}
		parts = append(parts, text)
	}
	if res.StructuredContent != nil {
		js, err := json.Marshal(res.StructuredContent)
		if err == nil && !strings.Contains(strings.Join(parts, "\n"), string(js)) && !sameJSON(parts, res.StructuredContent) {
			parts = append(parts, "structured content: "+string(js))
		}
	}
	return tool.Result{Content: capText(strings.Join(parts, "\n"), limit), IsError: res.IsError, Images: images}
}

// sameJSON reports whether one text part is the structured content
// already (servers are told to send both), so it is not said twice.
func sameJSON(parts []string, v any) bool {
	want, _ := json.Marshal(v)
	for _, p := range parts {
		var got any
		if json.Unmarshal([]byte(p), &got) == nil {
			b, _ := json.Marshal(got)
			if string(b) == string(want) {
				return true
			}
		}
	}
	return false
}

func renderContent(c sdk.Content) string {
	switch c := c.(type) {
	case *sdk.TextContent:
		return c.Text
	case *sdk.ImageContent:
		return fmt.Sprintf("[image: %s, %s]", orUnknown(c.MIMEType), size(len(c.Data)))
	case *sdk.AudioContent:
		return fmt.Sprintf("[audio: %s, %s]", orUnknown(c.MIMEType), size(len(c.Data)))
	case *sdk.ResourceLink:
		s := fmt.Sprintf("[resource link: %s", c.URI)
		if c.Name != "" {
			s += " (" + c.Name + ")"
		}
		if c.MIMEType != "" {
			s += ", " + c.MIMEType
		}
		if c.Description != "" {
			s += ": " + c.Description
		}
		return s + "]"
	case *sdk.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return "[empty resource]"
		}
		if r.Blob == nil {
			return fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text)
		}
		return fmt.Sprintf("[resource %s: %s, %s of binary data, not shown]", r.URI, orUnknown(r.MIMEType), size(len(r.Blob)))
	default:
		b, _ := json.Marshal(c)
		return string(b)
	}
}

// orUnknownImage is the media type sent with an image that came without
// one: providers require a type, and PNG is what MCP servers send most.
func orUnknownImage(mime string) string {
	if mime == "" {
		return "image/png"
	}
	return mime
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}

// size says a byte count the way a person reads it.
func size(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// capText keeps the first limit bytes of s (on a rune boundary) and says
// what was cut: a model must never take a truncated result for a whole one.
func capText(s string, limit int) string {
	if limit <= 0 || len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !startsRune(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[result truncated: showing the first %s of %s; %s cut]", size(cut), size(len(s)), size(len(s)-cut))
}

func startsRune(b byte) bool { return b&0xC0 != 0x80 }
