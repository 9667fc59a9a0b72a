// Command registry is the test bed's container registry: distribution's registry v3 with
// only the filesystem storage driver (and, with -user, htpasswd credentials), serving plain
// HTTP on a loopback port it picks. It prints "listening on ADDR" once it accepts.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	"github.com/sirupsen/logrus"
	"golang.org/x/crypto/bcrypt"

	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
)

func main() {
	dir := flag.String("dir", "", "storage directory (required)")
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	user := flag.String("user", "", "user:password the registry requires (none: anonymous)")
	flag.Parse()
	if *dir == "" {
		log.Fatal("-dir is required")
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		log.Fatalf("-addr %q: only loopback addresses", *addr)
	}
	cfg := &configuration.Configuration{
		Storage: configuration.Storage{
			"filesystem": configuration.Parameters{"rootdirectory": filepath.Join(*dir, "data")},
			"delete":     configuration.Parameters{"enabled": true},
		},
	}
	// Quiet: every 404 a client probes with is logged as an error otherwise.
	cfg.Log.AccessLog.Disabled = true
	logrus.SetLevel(logrus.FatalLevel)
	if *user != "" {
		name, pass, ok := strings.Cut(*user, ":")
		if !ok {
			log.Fatal("-user takes user:password")
		}
		hash, err := bcrypt.GenerateFromPassword([]byte(pass), bcrypt.MinCost)
		if err != nil {
			log.Fatal(err)
		}
		path := filepath.Join(*dir, "htpasswd")
		if err := os.WriteFile(path, []byte(name+":"+string(hash)+"\n"), 0o600); err != nil {
			log.Fatal(err)
		}
		cfg.Auth = configuration.Auth{"htpasswd": configuration.Parameters{"realm": "bed", "path": path}}
	}
	app := handlers.NewApp(context.Background(), cfg)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	log.Fatal(http.Serve(ln, app))
}
