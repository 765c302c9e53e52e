// Package webchat serves a minimal browser chat page for an agent and
// keeps it to its owner: the page (embedded HTML/JavaScript, no build
// step), the small HTTP API it talks to, the Guard every request goes
// through, and a server with the timeouts a local page needs.
//
//	guard := webchat.NewGuard()
//	page := webchat.Handler(webchat.Backend{Events: broker, Send: send, Stop: stop, Guard: guard})
//	fmt.Println("open", guard.URL("http://127.0.0.1:8080/"))
//	webchat.NewServer("127.0.0.1:8080", page).ListenAndServe()
//
// The page shows the assistant's text as it streams (once a frame, so a
// long answer in small pieces costs it no more than a short one), a card
// per tool call (its arguments, its progress, its result or error), and
// lets the user send a message (which starts a run, or steers the running
// one) and stop the run. Before the first message it says what to do, and
// Backend.Notice (say, that a scripted model answers) stays in view above
// the conversation. go run ./examples/web serves it.
//
// A local page is reachable by every web page its user visits, so a
// Handler requires a Guard, which admits only its owner: localhost names
// only (no DNS rebinding), a random token from the address the server
// prints (kept as a SameSite=Strict cookie), and state-changing requests
// only as same-origin JSON of bounded size, in bytes and time. Every
// refusal is answered at once and closes the connection, even when the
// request declared a body it never sends; NewServer adds header, read and
// idle timeouts.
package webchat

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

// Backend is what the page needs from the server.
type Backend struct {
	// Events serves the agent's events as SSE (an *sse.Broker).
	Events http.Handler
	// Send delivers a message typed by the user: it starts a run, or
	// steers the running one. mode says which ("prompt", "steer", "sent").
	Send func(ctx context.Context, text string) (mode string, err error)
	// Stop aborts the running turn.
	Stop func(ctx context.Context) error
	// Guard admits the page's owner only; required (NewGuard).
	Guard *Guard
	// Notice, when not empty, is shown above the conversation as plain
	// text: tell the user here what answers them when it is not a real
	// model ("A scripted model answers: set OPENAI_API_KEY for a real
	// one.").
	Notice string
}

// Handler serves the page at / and its API under /api/, behind b.Guard:
//
//	GET  /api/events  the agent's events as Server-Sent Events (Backend.Events, an *sse.Broker)
//	GET  /api/info    {"notice": Backend.Notice}: a line the page shows above the conversation
//	POST /api/send    {"text": "..."}: Backend.Send; answers {"mode": "prompt" | "steer" | "sent"}
//	POST /api/stop    Backend.Stop; answers 204
//
// A Backend without a Guard gets a handler that refuses every request.
func Handler(b Backend) http.Handler {
	if b.Guard == nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Answer at once and close: the server reads no body first.
			w.Header().Set("Connection", "close")
			http.Error(w, "webchat: Backend.Guard is nil", http.StatusInternalServerError)
			_ = http.NewResponseController(w).SetReadDeadline(time.Now())
		})
	}
	mux := http.NewServeMux()
	files, _ := fs.Sub(static, "static")
	mux.Handle("GET /", http.FileServerFS(files))
	mux.Handle("GET /api/events", b.Events)
	mux.Handle("GET /api/info", info(b))
	mux.HandleFunc("POST /api/send", func(w http.ResponseWriter, r *http.Request) {
		// Read to the end (bounded by the Guard), so that the connection
		// serves the next request.
		data, err := io.ReadAll(r.Body)
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			http.Error(w, "the message is too long", http.StatusRequestEntityTooLarge)
			return
		}
		var in struct {
			Text string `json:"text"`
		}
		if err != nil || json.Unmarshal(data, &in) != nil || strings.TrimSpace(in.Text) == "" {
			http.Error(w, `want {"text": "..."}`, http.StatusBadRequest)
			return
		}
		mode, err := b.Send(r.Context(), in.Text)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"mode": mode})
	})
	mux.HandleFunc("POST /api/stop", func(w http.ResponseWriter, r *http.Request) {
		if err := b.Stop(r.Context()); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	return b.Guard.Handler(mux)
}
