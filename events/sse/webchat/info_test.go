package webchat_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentloop/agentloop/events/sse/webchat"
)

// TestInfo: GET /api/info answers the Backend's notice, as JSON, to the
// page's owner only.
func TestInfo(t *testing.T) {
	for _, notice := range []string{"", "A scripted model answers.", `<b>not markup</b> "quoted"`} {
		guard := webchat.NewGuard()
		srv := httptest.NewServer(webchat.Handler(webchat.Backend{
			Guard: guard, Events: http.NotFoundHandler(), Notice: notice,
			Send: func(context.Context, string) (string, error) { return "prompt", nil },
			Stop: func(context.Context) error { return nil },
		}))
		for _, auth := range []string{"", "Bearer " + guard.Token} {
			req, _ := http.NewRequest("GET", srv.URL+"/api/info", nil)
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Notice *string `json:"notice"`
			}
			err = json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
			switch {
			case auth == "" && resp.StatusCode != http.StatusUnauthorized:
				t.Errorf("%q without the token: status %d", notice, resp.StatusCode)
			case auth != "" && (resp.StatusCode != 200 || err != nil || got.Notice == nil || *got.Notice != notice):
				t.Errorf("%q: status %d, %v, %v", notice, resp.StatusCode, err, got.Notice)
			}
		}
		srv.Close()
	}
}
