package openai

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// strictServer is a Responses API server that refuses input the way
// OpenAI's does, so that a test finds what the real server would refuse.
// It answers the n-th request with replies[n] (each a stream), honouring
// include: without "reasoning.encrypted_content" the reasoning items it
// streams carry none, as OpenAI's. Its rules for a stateless request
// (store false):
//
//   - a reasoning item without encrypted_content: 404 "Item with id
//     'rs_…' not found. Items are not persisted when `store` is set to
//     false. ..." (OpenAI looks it up by id, and kept nothing);
//   - a reasoning item followed by no item of the assistant's turn: 400;
//   - a message or function_call item carrying the id of one the server
//     streamed after a reasoning item, without that reasoning item
//     before it: 400;
//   - two items with one id: 400;
//   - a reasoning item with a field the API does not define: 400.
type strictServer struct {
	URL     string
	mu      sync.Mutex
	replies []string
	linked  map[string]string // item id → the reasoning item it followed
	reqs    []map[string]any
}

func newStrictServer(t *testing.T, replies ...string) *strictServer {
	t.Helper()
	s := &strictServer{replies: replies, linked: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

const notPersisted = "Item with id '%s' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."

var encryptedField = regexp.MustCompile(`,?"encrypted_content":"[^"]*"`)

func (s *strictServer) handle(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.reqs)
	s.reqs = append(s.reqs, body)
	if status, msg := s.refuse(body); status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": "input", "code": nil}})
		return
	}
	if n >= len(s.replies) {
		w.WriteHeader(500)
		return
	}
	reply := s.replies[n]
	if !strings.Contains(fmt.Sprint(body["include"]), "reasoning.encrypted_content") {
		reply = encryptedField.ReplaceAllString(reply, "")
	}
	s.learn(reply)
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, reply)
}

// learn records which reasoning item each item of a served stream
// followed.
func (s *strictServer) learn(stream string) {
	last := ""
	for line := range strings.Lines(stream) {
		data, ok := strings.CutPrefix(strings.TrimSpace(line), "data:")
		if !ok {
			continue
		}
		var ev struct {
			Type string `json:"type"`
			Item struct {
				Type string `json:"type"`
				ID   string `json:"id"`
			} `json:"item"`
		}
		if json.Unmarshal([]byte(data), &ev) != nil || ev.Type != "response.output_item.done" {
			continue
		}
		switch ev.Item.Type {
		case "reasoning":
			last = ev.Item.ID
		case "message", "function_call":
			if last != "" {
				s.linked[ev.Item.ID] = last
			}
		}
	}
}

func (s *strictServer) refuse(body map[string]any) (int, string) {
	if body["store"] != false {
		return 0, ""
	}
	input, _ := body["input"].([]any)
	seen := map[string]bool{}
	for i, x := range input {
		it, _ := x.(map[string]any)
		id, _ := it["id"].(string)
		if id != "" {
			if seen[id] {
				return 400, fmt.Sprintf("Duplicate item found with id %s.", id)
			}
			seen[id] = true
		}
		switch it["type"] {
		case "reasoning":
			for k := range it {
				if !slices.Contains([]string{"type", "id", "summary", "encrypted_content", "content", "status"}, k) {
					return 400, fmt.Sprintf("Unknown parameter: 'input[%d].%s'.", i, k)
				}
			}
			if ec, _ := it["encrypted_content"].(string); ec == "" {
				return 404, fmt.Sprintf(notPersisted, id)
			}
			next := map[string]any{}
			if i+1 < len(input) {
				next, _ = input[i+1].(map[string]any)
			}
			if next["type"] != "function_call" && next["type"] != "reasoning" && (next["type"] != "message" || next["role"] != "assistant") {
				return 400, fmt.Sprintf("Item '%s' of type 'reasoning' was provided without its required following item.", id)
			}
		case "message", "function_call":
			if rs, ok := s.linked[id]; ok && !seen[rs] {
				return 400, fmt.Sprintf("Item '%s' of type '%s' was provided without its required 'reasoning' item: '%s'.", id, it["type"], rs)
			}
		}
	}
	return 0, ""
}

// requests returns the bodies of the requests received so far.
func (s *strictServer) requests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}
