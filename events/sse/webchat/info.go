package webchat

import (
	"encoding/json"
	"net/http"
)

// info is the page's GET /api/info: what it shows before any message,
// {"notice": Backend.Notice}.
func info(b Backend) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(map[string]string{"notice": b.Notice})
	}
}
