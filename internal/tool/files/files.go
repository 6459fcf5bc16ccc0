package files

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
	"github.com/massgen/massgen/internal/workspace"
)

// Limits of what a call reads or returns. A model's context is the scarce
// resource: outputs past these are cut with a note saying how to see more.
const (
	maxRead       = 10 << 20 // bytes read from one file for read, edit, grep
	maxOutput     = 100_000  // bytes of text returned by one call
	maxEntries    = 1000     // names listed by list_directory, glob
	maxWalk       = 100_000  // entries visited by glob and grep
	maxGrepHits   = 200      // lines returned by grep
	maxGrepFileSz = 2 << 20  // larger files are skipped by grep
	sniffLen      = 8 << 10  // bytes looked at to tell text from binary
	noteTruncated = "[output truncated]"
)

// Tools are the file tools of the agent g guards, in the order offered.
func Tools(g *workspace.Guard) []tool.Tool {
	return []tool.Tool{
		readFile(g), writeFile(g), editFile(g), listDirectory(g), createDirectory(g),
		globTool(g), grepTool(g), deleteFile(g),
	}
}

// Names of the file tools (not execute_command), for planning mode and docs.
var Names = []string{"read_file", "write_file", "edit_file", "list_directory", "create_directory", "glob", "grep", "delete_file"}

// schema builds an object schema from name → (type, description) pairs;
// required names come first in req.
func schema(req []string, props map[string][2]string) map[string]any {
	p := map[string]any{}
	for name, td := range props {
		p[name] = map[string]any{"type": td[0], "description": td[1]}
	}
	s := map[string]any{"type": "object", "properties": p}
	if len(req) > 0 {
		s["required"] = req
	}
	return s
}

// fn is a file tool: decode args into A, then run.
func fn[A any](name, desc string, params map[string]any, run func(ctx context.Context, a A) (string, error)) tool.Tool {
	return tool.Func(llm.ToolDef{Name: name, Description: desc, Parameters: params},
		func(ctx context.Context, raw json.RawMessage) (string, error) {
			var a A
			if err := json.Unmarshal(raw, &a); err != nil {
				return "", fmt.Errorf("%s: the arguments do not fit its parameters: %v", name, err)
			}
			if err := ctx.Err(); err != nil {
				return "", err
			}
			return run(ctx, a)
		})
}

// pathArgs accepts upstream's spellings of the one path argument.
type pathArgs struct {
	Path     string `json:"path"`
	FilePath string `json:"file_path"`
}

func (p pathArgs) get(tool string) (string, error) {
	if p.Path != "" {
		return p.Path, nil
	}
	if p.FilePath != "" {
		return p.FilePath, nil
	}
	return "", fmt.Errorf("%s needs a path (relative to your workspace, or absolute)", tool)
}

// binaryExt are extensions text tools never read, as upstream refuses
// them (images, media, archives, executables, office documents, pdf).
var binaryExt = map[string]bool{}

func init() {
	for _, e := range strings.Fields(`.png .jpg .jpeg .gif .bmp .ico .webp .tiff .tif .svgz .heic
		.mp3 .wav .ogg .flac .m4a .aac .mp4 .mov .avi .mkv .webm .wmv
		.zip .tar .gz .tgz .bz2 .xz .7z .rar .zst .jar .whl
		.exe .dll .so .dylib .bin .o .a .class .pyc .wasm
		.pdf .doc .docx .xls .xlsx .ppt .pptx .odt .ods .sqlite .db`) {
		binaryExt[e] = true
	}
}

// binary reports why data (from file p) is not text, or "".
func binary(p string, data []byte) string {
	if binaryExt[strings.ToLower(filepath.Ext(p))] {
		return fmt.Sprintf("%s is a %s file, not text", p, filepath.Ext(p))
	}
	head := data[:min(len(data), sniffLen)]
	if bytes.IndexByte(head, 0) >= 0 {
		return fmt.Sprintf("%s holds binary data (a NUL byte)", p)
	}
	// Cut a possibly split last rune before checking UTF-8.
	for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.Valid(head); i++ {
		head = head[:len(head)-1]
	}
	if !utf8.Valid(head) {
		return fmt.Sprintf("%s is not UTF-8 text", p)
	}
	return ""
}

// capText cuts s to maxOutput bytes on a line boundary, with a note.
func capText(s, how string) string {
	if len(s) <= maxOutput {
		return s
	}
	cut := strings.LastIndexByte(s[:maxOutput], '\n')
	if cut < 0 {
		cut = maxOutput
	}
	return s[:cut] + fmt.Sprintf("\n%s showed %d of %d bytes; %s", noteTruncated, cut, len(s), how)
}
