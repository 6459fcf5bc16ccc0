package config

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/massgen/massgen/internal/coord"
)

// CriteriaFromJSON reads evaluation criteria from a JSON file's contents,
// as upstream's --eval-criteria takes them: a list, or an object whose
// "criteria" is one (what MassGen's quality tools write). Each item is an
// object with a "text" (or "description", or "name") and an optional
// "category" (primary, standard, stretch, or upstream's legacy words).
func CriteriaFromJSON(data []byte) ([]coord.Criterion, error) {
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	var wrapped struct {
		Criteria json.RawMessage `json:"criteria"`
	}
	if json.Unmarshal(raw, &wrapped) == nil && len(wrapped.Criteria) > 0 {
		raw = wrapped.Criteria
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf(`it must be a JSON list of criteria, or {"criteria": [...]}`)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("it holds no criteria")
	}
	out := make([]coord.Criterion, 0, len(items))
	for i, it := range items {
		var c struct {
			Text, Description, Name, Category string
		}
		if err := json.Unmarshal(it, &c); err != nil {
			return nil, fmt.Errorf("criterion %d must be an object like {\"text\": \"...\", \"category\": \"primary|standard|stretch\"}", i+1)
		}
		text := strings.TrimSpace(c.Text)
		if text == "" {
			text = strings.TrimSpace(c.Description)
		}
		if text == "" {
			text = strings.TrimSpace(c.Name)
		}
		if text == "" {
			return nil, fmt.Errorf("criterion %d has no \"text\"", i+1)
		}
		out = append(out, coord.Criterion{Text: text, Category: coord.NormalCategory(c.Category)})
	}
	return out, nil
}
