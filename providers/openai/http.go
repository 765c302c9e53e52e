package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/agentloop/agentloop/internal/httpx"
)

// post sends a streaming request to path, retrying rate limits, server
// errors and failed connections before the first byte, and returns the
// stream's body (bounded by the client's limits).
func post(ctx context.Context, client *http.Client, opts Options, path, key string, body []byte) (io.ReadCloser, error) {
	return httpx.Retry(ctx, opts.HTTPOptions, func() (io.ReadCloser, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, opts.BaseURL+path, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		for k, v := range opts.Headers {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body) // bounded by MaxErrorBodyBytes
			wait, _ := httpx.RetryAfter(resp.Header, time.Now())
			return nil, &httpx.HTTPError{Status: resp.StatusCode, Message: errorMessage(raw), RetryAfter: wait,
				Method: req.Method, URL: httpx.RedactURL(req.URL)}
		}
		return resp.Body, nil
	})
}

// errorMessage reads the message of an error body: the "error" object's
// message when the body is JSON of the usual shape, the body otherwise.
func errorMessage(raw []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && len(e.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Error, &obj) == nil && obj.Message != "" {
			return obj.Message
		}
		var str string
		if json.Unmarshal(e.Error, &str) == nil && str != "" {
			return str
		}
	}
	return strings.TrimSpace(string(raw))
}
