package conformance

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

const validationPrefix = `Validation failed for tool "`

// orderTolerance is how far apart two parallel bodies' scripted times must
// be for their events to keep the reference's relative order. Bodies that
// finish within a few milliseconds of each other have no real completion
// order: the reference's comes from JavaScript's microtask queue, which Go
// has no counterpart of.
const orderTolerance = 20 // ms

// Compare reports the first line where got differs from want, by the
// suite's rules, or "" when the traces agree. Lines are compared as JSON
// (numbers by value; a text that is itself a JSON object or array compared
// as parsed JSON; a validation error by its first line, the sorted paths it
// lists and the arguments it echoes). Within a parallel batch of s, two
// body events of different calls may trade places when their scripted
// times are less than orderTolerance apart; every other pair keeps the
// reference's order.
func Compare(s Scenario, want, got []json.RawMessage) string {
	w, err := parseLines(want)
	if err != nil {
		return "golden: " + err.Error()
	}
	g, err := parseLines(got)
	if err != nil {
		return "produced: " + err.Error()
	}
	at := func(i int) string {
		return fmt.Sprintf("line %d:\n  want %s\n  got  %s", i+1, lineAt(want, i), lineAt(got, i))
	}
	if len(w) != len(g) {
		for i := range min(len(w), len(g)) {
			if w[i].key != g[i].key {
				return at(i)
			}
		}
		return fmt.Sprintf("line %d: want %d lines, got %d", min(len(w), len(g))+1, len(w), len(g))
	}
	executed := executedCalls(w)
	windows := batchWindows(w)
	for i := 0; i < len(w); {
		if end, ok := windows[i]; ok {
			if !s.reordered(executed, w[i:end], g[i:end]) {
				for k := i; k < end; k++ {
					if w[k].key != g[k].key {
						return at(k)
					}
				}
				return at(i)
			}
			i = end
			continue
		}
		if w[i].key != g[i].key {
			return at(i)
		}
		i++
	}
	return ""
}

func lineAt(lines []json.RawMessage, i int) string {
	if i < len(lines) {
		return string(lines[i])
	}
	return "<end>"
}

// line is one trace line: its fields, and its normalized value as a key
// that equal lines share.
type line struct {
	fields map[string]any
	key    string
}

func (l line) str(field string) string { s, _ := l.fields[field].(string); return s }

func parseLines(raw []json.RawMessage) ([]line, error) {
	out := make([]line, len(raw))
	for i, r := range raw {
		var v map[string]any
		if err := json.Unmarshal(r, &v); err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		key, err := json.Marshal(norm(v)) // maps marshal with sorted keys
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		out[i] = line{v, string(key)}
	}
	return out, nil
}

// executedCalls is the set of calls whose bodies ran, from the closing
// "executed" line.
func executedCalls(trace []line) map[string]bool {
	out := map[string]bool{}
	for _, l := range trace {
		if l.str("type") != "executed" {
			continue
		}
		calls, _ := l.fields["calls"].([]any)
		for _, c := range calls {
			if m, ok := c.(map[string]any); ok {
				id, _ := m["toolCallId"].(string)
				out[id] = true
			}
		}
	}
	return out
}

// batchWindows maps the first line of each batch to the line after it: a
// batch runs from its first tool_execution_start to the first tool-result
// message_start or turn_end after it.
func batchWindows(trace []line) map[int]int {
	out := map[int]int{}
	for i := 0; i < len(trace); i++ {
		if trace[i].str("type") != "tool_execution_start" {
			continue
		}
		s := i
		for i < len(trace) && !closesBatch(trace[i]) {
			i++
		}
		out[s] = i
	}
	return out
}

func closesBatch(l line) bool {
	t := l.str("type")
	return t == "turn_end" || (t == "message_start" && l.str("role") == "toolResult")
}

// reordered reports whether got is want in an order the rules allow.
func (s Scenario) reordered(executed map[string]bool, want, got []line) bool {
	if !sameMultiset(want, got) {
		return false
	}
	tools := map[string]ScriptedTool{}
	for _, t := range s.Tools {
		tools[t.Name] = t
	}
	names := map[string]string{}
	sequential := s.ToolExecution == "sequential"
	for _, l := range want {
		if l.str("type") == "tool_execution_start" {
			names[l.str("toolCallId")] = l.str("toolName")
			sequential = sequential || tools[l.str("toolName")].ExecutionMode == "sequential"
		}
	}
	isBody := func(l line) bool {
		t := l.str("type")
		return t == "tool_execution_update" || (t == "tool_execution_end" && executed[l.str("toolCallId")])
	}
	scheduled := func(l line) int {
		if l.str("type") == "tool_execution_update" || l.str("text") == "aborted" {
			return 0
		}
		return tools[names[l.str("toolCallId")]].DelayMs
	}
	// Where each golden line stands in got (equal lines matched in turn).
	seen := map[string]int{}
	pos := make([]int, len(want))
	for i, l := range want {
		n := seen[l.key]
		seen[l.key]++
		for j, o := range got {
			if o.key == l.key {
				if n == 0 {
					pos[i] = j
					break
				}
				n--
			}
		}
	}
	for i := range want {
		for j := i + 1; j < len(want); j++ {
			a, b := want[i], want[j]
			free := !sequential && isBody(a) && isBody(b) &&
				a.str("toolCallId") != b.str("toolCallId") &&
				abs(scheduled(a)-scheduled(b)) < orderTolerance
			if !free && pos[i] > pos[j] {
				return false
			}
		}
	}
	return true
}

func sameMultiset(a, b []line) bool {
	count := map[string]int{}
	for _, l := range a {
		count[l.key]++
	}
	for _, l := range b {
		if count[l.key]--; count[l.key] < 0 {
			return false
		}
	}
	return len(a) == len(b)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
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
	}
	return v // numbers are float64 on both sides: compared by value
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
