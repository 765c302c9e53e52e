package webchat

import (
	"net/http"
	"time"
)

// NewServer returns an http.Server for a local page with timeouts that
// keep half-sent requests and idle connections from piling up: 10 s to
// read a request's headers, 40 s to read a whole request (the Guard gives
// a body 30 s from its headers), 2 minutes idle, 64 KiB of headers. The
// read timeout bounds reading the request only: an event stream, which
// has no body, outlives it. There is no write timeout on the connection
// as a whole, which would end event streams; the Broker bounds each write.
func NewServer(addr string, h http.Handler) *http.Server {
	return &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 40 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
}
