package devui_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/devui"
)

// snippet:serve
// serve shows agent's dev UI at http://localhost:7700/ until ctx ends.
func serve(ctx context.Context, agent *onion.Agent) error {
	ui, err := devui.New([]*onion.Agent{agent}, devui.Prices(map[string]devui.Price{
		"gpt-4o-mini": {Input: 0.15, Output: 0.60}, // dollars per million tokens
	}))
	if err != nil {
		return err
	}
	defer ui.Close() // stops the runs still going
	srv := &http.Server{Addr: "localhost:7700", Handler: ui}
	go func() {
		<-ctx.Done()
		ui.Close() // ends the pages' event streams, so that Shutdown can finish
		srv.Shutdown(context.Background())
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// end snippet:serve

var _ = serve

// The page, served: only to its own origin, never framed.
func ExampleHandler() {
	agent, err := onion.NewAgent("helper", onion.BaseURL("http://127.0.0.1:9/v1"), onion.APIKey("test"))
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(devui.Handler(agent))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Status, resp.Header.Get("X-Frame-Options"))

	req, _ := http.NewRequest("POST", srv.URL+"/api/conversations", nil)
	req.Header.Set("Origin", "https://elsewhere.example")
	resp, err = srv.Client().Do(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Status)
	// Output:
	// 200 OK DENY
	// 403 Forbidden
}
