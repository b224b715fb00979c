package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/mcp/internal/version"
)

// An Option configures a connection made by Connect, ConnectCommand or
// ConnectHTTP.
type Option interface{ apply(*options) }

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

type options struct {
	roots    []string
	logger   *slog.Logger
	protocol string
}

// Roots lets the server see the given directories as the client's roots
// (MCP's roots capability), for servers that work on the user's files.
// Without it the client declares no roots, and no capability it does not
// serve.
func Roots(dirs ...string) Option {
	return optionFunc(func(o *options) { o.roots = append(o.roots, dirs...) })
}

// Logger sets where warnings go, such as a tool left out (see
// LeftOutError). By default they go to slog.Default().
func Logger(l *slog.Logger) Option {
	return optionFunc(func(o *options) { o.logger = l })
}

// ProtocolVersion asks for the MCP protocol version v (such as
// "2025-11-25") instead of the newest the SDK speaks; the server may still
// answer with an older one.
func ProtocolVersion(v string) Option {
	return optionFunc(func(o *options) { o.protocol = v })
}

// A Server is a connected MCP server: the tools it offers as onion tools,
// and the ones left out and why. Close ends the session, as
// onion.Agent.Close does through the tools.
type Server struct {
	// Name names the server in error messages: its serverInfo name and how
	// it was reached (the command or the URL).
	Name string
	// Tools are the server's tools that can be offered to a model.
	Tools []*onion.Tool
	// LeftOut are the tools that cannot, each with why. They were logged.
	LeftOut []*LeftOutError

	session *session
}

// ServerApproves reports whether the server asks its own user before the
// tool named tool (its onion name, as in Tools) runs: an onion server says
// so in the tool's listing. A client that cannot be asked through
// elicitation, as this one, then sees such a call denied by the server
// (ErrDeniedByServer) unless the server has an approver of its own.
func (s *Server) ServerApproves(tool string) bool { return s.session.approves[tool] }

// Close ends the session with the server, and for a command the server's
// whole process group. Only the first call does anything.
func (s *Server) Close() error { return s.session.Close() }

// Tools connects to the MCP server at the other end of transport, lists
// its tools (every page) and returns them as onion tools sharing one
// session; ctx bounds the connection and the listing only. Close the
// session with onion.Agent.Close, or by closing any tool's resource.
// Tools that cannot be used are left out, with a warning logged (see
// Connect to read them). For a stdio server prefer Command or
// ConnectCommand to an mcp.CommandTransport: they end the server's whole
// process group on Close, and promptly.
func Tools(ctx context.Context, transport mcp.Transport) ([]*onion.Tool, error) {
	s, err := Connect(ctx, transport)
	if err != nil {
		return nil, err
	}
	return s.Tools, nil
}

// Command starts the program name with args as a stdio MCP server and
// returns its tools (see Tools). The program runs until the session is
// closed, whatever becomes of ctx; its stderr goes to this process's.
func Command(ctx context.Context, name string, args ...string) ([]*onion.Tool, error) {
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	s, err := ConnectCommand(ctx, cmd)
	if err != nil {
		return nil, err
	}
	return s.Tools, nil
}

// HTTP connects to the MCP server at url over streamable HTTP and returns
// its tools (see Tools).
func HTTP(ctx context.Context, url string) ([]*onion.Tool, error) {
	s, err := ConnectHTTP(ctx, url)
	if err != nil {
		return nil, err
	}
	return s.Tools, nil
}

// Connect is Tools with options, returning the whole Server.
func Connect(ctx context.Context, transport mcp.Transport, opts ...Option) (*Server, error) {
	return connect(ctx, transport, "", nil, opts)
}

// ConnectCommand runs cmd as a stdio MCP server (see Command), in a
// process group of its own: Close ends it and everything it started. cmd
// must not have been started; its Stdin and Stdout are the session's.
func ConnectCommand(ctx context.Context, cmd *exec.Cmd, opts ...Option) (*Server, error) {
	t := &commandTransport{cmd: cmd}
	s, err := connect(ctx, t, commandLine(cmd), t, opts)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// ConnectHTTP connects to the MCP server at url over streamable HTTP (see
// HTTP). When a call's stream breaks, one reconnect is tried (a stream the
// server can resume comes back), then the call ends as outcome unknown,
// within about a second instead of the SDK's default of five attempts over
// many seconds.
func ConnectHTTP(ctx context.Context, url string, opts ...Option) (*Server, error) {
	t := &mcp.StreamableClientTransport{
		Endpoint:   url,
		MaxRetries: 1,
		// mcpclient reads the tool list once and takes no notifications.
		DisableStandaloneSSE: true,
	}
	return connect(ctx, t, url, nil, opts)
}

// connect makes the session; where is how the server was reached, for
// error messages, and cmdT the command's transport when it is one.
func connect(ctx context.Context, transport mcp.Transport, where string, cmdT *commandTransport, opts []Option) (*Server, error) {
	var o options
	for _, opt := range opts {
		opt.apply(&o)
	}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "onion", Version: version.Onion()}, &mcp.ClientOptions{
		// Only what the client serves: a server that thinks it may ask for
		// roots waits for them, and may not exit when its stdin closes.
		Capabilities: capabilities(o.roots),
	})
	if err := serveRoots(client, o.roots); err != nil {
		return nil, err
	}
	raw := &rawTools{pending: make(map[jsonrpc.ID]bool), tools: make(map[string]rawTool)}
	name := serverName("", where)
	cs, err := client.Connect(ctx, &recordingTransport{Transport: transport, raw: raw}, &mcp.ClientSessionOptions{ProtocolVersion: o.protocol})
	if err != nil {
		if cmdT != nil && cmdT.proc != nil {
			if exit, done := cmdT.proc.exitedWith(closeGrace); done {
				if exit == nil {
					exit = errors.New("exit status 0")
				}
				return nil, fmt.Errorf("mcpclient: %s exited (%v) before the session began: %w", name, exit, err)
			}
		}
		return nil, fmt.Errorf("mcpclient: connect to %s: %w", name, err)
	}
	if res := cs.InitializeResult(); res != nil && res.ServerInfo != nil {
		name = serverName(res.ServerInfo.Name, where)
	}
	s := newSession(cs, name)
	srv := &Server{Name: name, session: s}
	tools, leftOut, err := s.tools(ctx, raw)
	if err != nil {
		return nil, errors.Join(err, s.Close())
	}
	for _, lo := range leftOut {
		o.logger.LogAttrs(ctx, slog.LevelWarn, "mcpclient: tool left out",
			slog.String("server", lo.Server), slog.String("tool", lo.Tool), slog.String("reason", lo.Reason))
	}
	srv.Tools, srv.LeftOut = tools, leftOut
	return srv, nil
}

// serverName names a server in messages: MCP server "everything" (npx -y
// @modelcontextprotocol/server-everything).
func serverName(info, where string) string {
	switch {
	case info != "" && where != "":
		return "MCP server " + strconv.Quote(info) + " (" + where + ")"
	case info != "":
		return "MCP server " + strconv.Quote(info)
	case where != "":
		return "the MCP server (" + where + ")"
	}
	return "the MCP server"
}
