package conformance

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
)

const validationPrefix = `Validation failed for tool "`

// Compare reports the first line where got differs from want, by the
// suite's rules: values compared as JSON (numbers by value), a text that is
// itself a JSON object or array compared as parsed JSON, and a validation
// error compared by its first line, the sorted paths it lists and the
// arguments it echoes. It returns "" when the traces agree.
func Compare(want, got []json.RawMessage) string {
	for i := 0; i < max(len(want), len(got)); i++ {
		if i >= len(want) || i >= len(got) {
			return fmt.Sprintf("line %d: want %d lines, got %d", i+1, len(want), len(got))
		}
		w, err1 := decodeNorm(want[i])
		g, err2 := decodeNorm(got[i])
		if err1 != nil || err2 != nil || !reflect.DeepEqual(w, g) {
			return fmt.Sprintf("line %d:\n  want %s\n  got  %s", i+1, want[i], got[i])
		}
	}
	return ""
}

func decodeNorm(raw json.RawMessage) (any, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return norm(v), nil
}

type validationView struct {
	Head     string
	Paths    []string
	Received any
}

func norm(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = norm(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = norm(e)
		}
		return out
	case string:
		if strings.HasPrefix(x, validationPrefix) {
			return viewValidation(x)
		}
		if strings.HasPrefix(x, "{") || strings.HasPrefix(x, "[") {
			var parsed any
			if json.Unmarshal([]byte(x), &parsed) == nil {
				return [2]any{"json", norm(parsed)}
			}
		}
		return x
	case float64:
		if x == math.Trunc(x) {
			return x
		}
	}
	return v
}

func viewValidation(text string) validationView {
	head, rest, _ := strings.Cut(text, "\n")
	listing, received, _ := strings.Cut(rest, "\n\nReceived arguments:\n")
	var paths []string
	for _, l := range strings.Split(listing, "\n") {
		if p, ok := strings.CutPrefix(l, "  - "); ok {
			path, _, _ := strings.Cut(p, ":")
			paths = append(paths, path)
		}
	}
	sort.Strings(paths)
	var args any
	if json.Unmarshal([]byte(received), &args) != nil {
		args = [2]any{"unparsable", received}
	}
	return validationView{head, paths, norm(args)}
}
