package devserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/membership/static"
	"go.temporal.io/server/common/metrics"
	persql "go.temporal.io/server/common/persistence/sql"
	"go.temporal.io/server/common/persistence/sql/sqlplugin"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	"go.temporal.io/server/common/resolver"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
)

// Namespace is the namespace every server starts with, the one a client
// uses when it names none.
const Namespace = "default"

const (
	host        = "127.0.0.1"
	clusterName = "active"
	storeName   = "sqlite"
)

// Options configure a Server. The zero value is an in-memory server on a
// free port.
type Options struct {
	// DBFile is the SQLite file the server keeps its state in, created
	// (with its schema) when it does not exist; its directory must. Empty
	// keeps the state in memory, gone when the server stops.
	DBFile string
	// Port is the frontend's gRPC port on 127.0.0.1, the one clients dial;
	// 0 picks a free one. The server's other services always take free
	// ports.
	Port int
	// Logger receives the server's logs; nil discards them.
	Logger *slog.Logger
}

// Server is a running embedded Temporal server: every service in this
// process, one history shard, SQLite for persistence and visibility.
type Server struct {
	srv      temporal.Server
	hostPort string
}

// Start starts a server and returns once its frontend accepts requests
// (it returns early with ctx's error when ctx ends first). Each Server is
// independent: several may run, or start and stop one after another, in
// one process.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Port < 0 || opts.Port > 65535 {
		return nil, fmt.Errorf("devserver: port %d is out of range", opts.Port)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ports, err := freePorts(opts.Port)
	if err != nil {
		return nil, err
	}
	sqlConf, err := sqlConfig(opts.DBFile)
	if err != nil {
		return nil, err
	}
	conf := serverConfig(ports, sqlConf)
	authorizer, err := authorization.GetAuthorizerFromConfig(&conf.Global.Authorization)
	if err != nil {
		return nil, fmt.Errorf("devserver: authorizer: %w", err)
	}
	slogger := slogLogger{logger}
	claimMapper, err := authorization.GetClaimMapperFromConfig(&conf.Global.Authorization, slogger)
	if err != nil {
		return nil, fmt.Errorf("devserver: claim mapper: %w", err)
	}
	hosts := make(map[primitives.ServiceName]static.Hosts, len(ports.services))
	for name, port := range ports.services {
		hosts[primitives.ServiceName(name)] = static.SingleLocalHost(net.JoinHostPort(host, strconv.Itoa(port)))
	}
	srv, err := newServer(
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(hosts),
		temporal.WithLogger(slogger),
		temporal.WithAuthorizer(authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
		temporal.WithDynamicConfigClient(dynamicconfig.StaticClient{
			// One process serves every namespace: a small cache is enough.
			dynamicconfig.HistoryCacheHostLevelMaxSize.Key(): 8192,
			// The queues of history tasks are read at most 20 times a
			// second per shard by default, a limit a cluster of hundreds
			// of shards never meets; with one shard, a run's workflow task
			// then waited up to 50 ms to be handed to matching.
			// A client waiting for a run's result long-polls its history.
			// When its poll comes while a short run is closing, the server
			// (v1.32.1) may miss the close and the poll waits out its 20 s
			// (1 run in 300 of BenchmarkDurableStep). Polls end within 1 s
			// here, and the client asks again.
			dynamicconfig.HistoryLongPollExpirationInterval.Key(): time.Second,
			dynamicconfig.TransferProcessorMaxPollRPS.Key():       1000,
			dynamicconfig.TimerProcessorMaxPollRPS.Key():          1000,
			dynamicconfig.VisibilityProcessorMaxPollRPS.Key():     1000,
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("devserver: %w", err)
	}
	started := make(chan error, 1)
	go func() { started <- srv.Start() }()
	select {
	case err := <-started:
		if err != nil {
			return nil, errors.Join(fmt.Errorf("devserver: start: %w", err), stopError(srv.Stop()))
		}
	case <-ctx.Done():
		// Start cannot be interrupted: stop the server once it is up.
		go func() {
			if <-started == nil {
				_ = srv.Stop()
			}
		}()
		return nil, fmt.Errorf("devserver: start: %w", ctx.Err())
	}
	return &Server{srv: srv, hostPort: net.JoinHostPort(host, strconv.Itoa(ports.frontend))}, nil
}

func stopError(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("devserver: stop: %w", err)
}

// HostPort is the address clients dial, as client.Options.HostPort takes
// it: 127.0.0.1 and the frontend's port.
func (s *Server) HostPort() string { return s.hostPort }

// Stop stops every service of the server and waits for them to end. An
// in-memory server's state is gone; a file's stays for the next Start.
func (s *Server) Stop() error { return stopError(s.srv.Stop()) }

// newServer is temporal.NewServer with its panics made errors: a
// listener it could not open (a port taken since it was picked) makes it
// dereference nil.
func newServer(opts ...temporal.ServerOption) (srv temporal.Server, err error) {
	defer func() {
		if r := recover(); r != nil {
			srv, err = nil, fmt.Errorf("the server failed to build (is a port taken?): %v", r)
		}
	}()
	return temporal.NewServer(opts...)
}

// ports are the TCP ports of one server.
type ports struct {
	frontend, frontendHTTP int
	services               map[string]int // service name → gRPC port
	membership             map[string]int // service name → membership port
}

// freePorts picks a port for every listener of a server, frontend taking
// frontend unless it is 0. The ports are free when picked; another
// process could take one before the server binds it, and Start then
// fails.
func freePorts(frontend int) (ports, error) {
	names := []string{string(primitives.FrontendService), string(primitives.HistoryService),
		string(primitives.MatchingService), string(primitives.WorkerService)}
	need := 1 + 2*len(names) // the frontend's HTTP port, then gRPC and membership per service
	if frontend == 0 {
		need++
	}
	// Keep every listener open until all are picked, so no port comes twice.
	picked := make([]int, 0, need)
	for range need {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return ports{}, fmt.Errorf("devserver: pick a free port: %w", err)
		}
		defer l.Close()
		picked = append(picked, l.Addr().(*net.TCPAddr).Port)
	}
	if frontend == 0 {
		frontend, picked = picked[0], picked[1:]
	} else {
		// The server cannot say a port is taken; see that it is free.
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(frontend)))
		if err != nil {
			return ports{}, fmt.Errorf("devserver: port %d: %w", frontend, err)
		}
		l.Close()
	}
	p := ports{frontend: frontend, frontendHTTP: picked[0], services: map[string]int{}, membership: map[string]int{}}
	picked = picked[1:]
	for i, name := range names {
		p.services[name] = picked[2*i]
		p.membership[name] = picked[2*i+1]
	}
	p.services[string(primitives.FrontendService)] = frontend
	return p, nil
}

// sqlConfig is the SQLite store in file, or in memory when file is empty,
// with its schema and the default namespace in place.
func sqlConfig(file string) (*config.SQL, error) {
	conf := &config.SQL{PluginName: sqliteplugin.PluginName}
	if file == "" {
		// Each server has its own database: a random name, shared only by
		// the connections of this server.
		var b [8]byte
		_, _ = rand.Read(b[:])
		conf.DatabaseName = "onion-" + hex.EncodeToString(b[:])
		conf.ConnectAttributes = map[string]string{"mode": "memory", "cache": "shared"}
	} else {
		conf.DatabaseName = file
		conf.ConnectAttributes = map[string]string{"mode": "rwc"}
		switch _, err := os.Stat(file); {
		case errors.Is(err, os.ErrNotExist):
			if _, err := os.Stat(filepath.Dir(file)); err != nil {
				return nil, fmt.Errorf("devserver: database file %s: %w", file, err)
			}
			if err := sqliteschema.SetupSchema(conf); err != nil {
				return nil, fmt.Errorf("devserver: set up the schema in %s: %w", file, err)
			}
		case err != nil:
			return nil, fmt.Errorf("devserver: database file: %w", err)
		}
	}
	ns, err := sqliteschema.NewNamespaceConfig(clusterName, Namespace, false, nil)
	if err != nil {
		return nil, fmt.Errorf("devserver: namespace %q: %w", Namespace, err)
	}
	if err := sqliteschema.CreateNamespaces(conf, ns); err != nil {
		return nil, fmt.Errorf("devserver: create namespace %q: %w", Namespace, err)
	}
	if file == "" {
		if err := dropSlotIndexes(conf); err != nil {
			return nil, err
		}
	}
	return conf, nil
}

// slotIndexes are the visibility indexes of the custom search attribute
// slots (Bool01, Keyword07, …): 22 of the 58 indexes that each of a run's
// two visibility records (started, closed) updates, in a store where
// visibility was a quarter of the CPU a short run cost. A server in memory
// drops them: it holds few runs, and a query on such an attribute still
// works, by a scan.
var slotIndexes = []string{
	"bool_01", "bool_02", "bool_03", "datetime_01", "datetime_02", "datetime_03",
	"double_01", "double_02", "double_03", "int_01", "int_02", "int_03",
	"keyword_01", "keyword_02", "keyword_03", "keyword_04", "keyword_05",
	"keyword_06", "keyword_07", "keyword_08", "keyword_09", "keyword_10",
}

// dropSlotIndexes drops the slotIndexes of the database conf names.
func dropSlotIndexes(conf *config.SQL) error {
	db, err := persql.NewSQLAdminDB(sqlplugin.DbKindUnknown, conf, resolver.NewNoopResolver(), log.NewNoopLogger(), metrics.NoopMetricsHandler)
	if err != nil {
		return fmt.Errorf("devserver: open the database: %w", err)
	}
	defer db.Close()
	for _, name := range slotIndexes {
		if err := db.Exec("DROP INDEX IF EXISTS by_" + name); err != nil {
			return fmt.Errorf("devserver: drop the visibility index by_%s: %w", name, err)
		}
	}
	return nil
}

// serverConfig is a single-process cluster on 127.0.0.1 with one history
// shard and everything in the SQLite store sql.
func serverConfig(p ports, sql *config.SQL) *config.Config {
	frontend := net.JoinHostPort(host, strconv.Itoa(p.frontend))
	conf := &config.Config{}
	conf.Global.Membership.MaxJoinDuration = 30 * time.Second
	conf.Global.Membership.BroadcastAddress = host
	conf.Persistence.DefaultStore = storeName
	conf.Persistence.VisibilityStore = storeName
	conf.Persistence.NumHistoryShards = 1
	conf.Persistence.DataStores = map[string]config.DataStore{storeName: {SQL: sql}}
	conf.ClusterMetadata = &cluster.Config{
		FailoverVersionIncrement: 10,
		MasterClusterName:        clusterName,
		CurrentClusterName:       clusterName,
		ClusterInformation: map[string]cluster.ClusterInformation{
			clusterName: {
				Enabled:                true,
				InitialFailoverVersion: 1,
				RPCAddress:             frontend,
				HTTPAddress:            net.JoinHostPort(host, strconv.Itoa(p.frontendHTTP)),
			},
		},
	}
	conf.DCRedirectionPolicy.Policy = "noop"
	conf.Services = make(map[string]config.Service, len(p.services))
	for name, port := range p.services {
		svc := config.Service{RPC: config.RPC{GRPCPort: port, MembershipPort: p.membership[name], BindOnIP: host}}
		if name == string(primitives.FrontendService) {
			svc.RPC.HTTPPort = p.frontendHTTP
		}
		conf.Services[name] = svc
	}
	conf.Archival.History.State = "disabled"
	conf.Archival.Visibility.State = "disabled"
	conf.NamespaceDefaults.Archival.History.State = "disabled"
	conf.NamespaceDefaults.Archival.Visibility.State = "disabled"
	// The server's own system workers dial the frontend through this.
	conf.PublicClient.HostPort = frontend
	return conf
}
