package registry

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/crypto/bcrypt"
)

// Registry is a running registry.
type Registry struct {
	cmd    *exec.Cmd
	exited chan error
	// Host is its host:port on loopback.
	Host string
	// User and Password are the credentials it requires ("" for none).
	User, Password string
}

// Binary is Debian's registry (package docker-registry, distribution 2.8): a package serves
// the bed as well as a source build did and costs no compile on a new machine.
const Binary = "docker-registry"

// Start runs a registry for the rest of the test; user is "user:password" to require
// credentials, or "". Its storage is in the test's temp dir.
func Start(t testing.TB, user string) *Registry {
	t.Helper()
	bin, err := exec.LookPath(Binary)
	if err != nil {
		t.Fatalf("%s is missing (%v): install Debian's package (apt-get install docker-registry), as .ci/run does", Binary, err)
	}
	dir := t.TempDir()
	r := &Registry{}
	r.User, r.Password, _ = strings.Cut(user, ":")
	auth := ""
	if user != "" {
		hash, err := bcrypt.GenerateFromPassword([]byte(r.Password), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "htpasswd")
		if err := os.WriteFile(path, []byte(r.User+":"+string(hash)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		auth = fmt.Sprintf("auth:\n  htpasswd:\n    realm: bed\n    path: %s\n", path)
	}
	// The registry cannot report a port it picked, so we pick one; another process may take it
	// between our close and its listen, which its exit says: try again with another.
	var stderr bytes.Buffer
	for attempt := 1; ; attempt++ {
		host := freePort(t)
		config := filepath.Join(dir, "config.yml")
		body := fmt.Sprintf(`version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
http:
  addr: %s
%s`, filepath.Join(dir, "data"), host, auth)
		if err := os.WriteFile(config, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		stderr.Reset()
		cmd := exec.Command(bin, "serve", config)
		cmd.Stdout, cmd.Stderr = &stderr, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting the registry: %v", err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		err := waitServing(host, exited)
		if err == nil {
			r.cmd, r.Host, r.exited = cmd, host, exited
			break
		}
		_ = cmd.Process.Kill()
		<-exited
		if !strings.Contains(stderr.String(), "address already in use") || attempt == 3 {
			t.Fatalf("the registry on %s did not start: %v\n%s", host, err, stderr.String())
		}
	}
	t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		<-r.exited
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("registry on %s said:\n%s", r.Host, stderr.String())
		}
	})
	return r
}

// freePort is a loopback host:port nothing listens on now.
func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// waitServing waits until the registry at host answers its API root (200, or 401 with
// credentials), the process exits or 30s pass.
func waitServing(host string, exited <-chan error) error {
	deadline := time.Now().Add(30 * time.Second)
	client := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		resp, err := client.Get("http://" + host + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusUnauthorized {
				return nil
			}
		}
		select {
		case err := <-exited:
			return fmt.Errorf("it exited: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("no answer on http://%s/v2/ in 30s", host)
}

// Keychain holds the registry's credentials.
func (r *Registry) Keychain() authn.Keychain {
	if r.User == "" {
		return authn.NewMultiKeychain()
	}
	return staticKeychain{r.Host, &authn.Basic{Username: r.User, Password: r.Password}}
}

type staticKeychain struct {
	host string
	auth authn.Authenticator
}

func (k staticKeychain) Resolve(res authn.Resource) (authn.Authenticator, error) {
	if res.RegistryStr() == k.host {
		return k.auth, nil
	}
	return authn.Anonymous, nil
}

// DockerConfig writes a docker config holding creds (host -> "user:password") into a new
// directory and points DOCKER_CONFIG at it for the rest of the test.
func DockerConfig(t *testing.T, creds map[string]string) {
	t.Helper()
	var entries []string
	for host, up := range creds {
		entries = append(entries, fmt.Sprintf("%q: {%q: %q}", host, "auth", encode(up)))
	}
	dir := t.TempDir()
	body := `{"auths": {` + strings.Join(entries, ", ") + `}}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", dir)
}

// Push writes a random image to ref (with platforms > 1, an index of that many images, one
// per platform) and returns its digest.
func (r *Registry) Push(t testing.TB, ref string, platforms int) v1.Hash {
	t.Helper()
	dst, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	opts := []remote.Option{remote.WithAuthFromKeychain(r.Keychain())}
	if platforms <= 1 {
		img, err := random.Image(256, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(dst, img, opts...); err != nil {
			t.Fatalf("pushing %s: %v", ref, err)
		}
		d, _ := img.Digest()
		return d
	}
	var adds []mutate.IndexAddendum
	archs := []string{"amd64", "arm64", "ppc64le", "s390x"}
	for i := 0; i < platforms; i++ {
		img, err := random.Image(256, 1)
		if err != nil {
			t.Fatal(err)
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: archs[i%len(archs)]}}})
	}
	idx := mutate.AppendManifests(empty.Index, adds...)
	if err := remote.WriteIndex(dst, idx, opts...); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	d, _ := idx.Digest()
	return d
}

// Digest is the digest ref points at, read with kc.
func Digest(t testing.TB, ref string, kc authn.Keychain) string {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	d, err := remote.Head(r, remote.WithAuthFromKeychain(kc))
	if err != nil {
		t.Fatalf("resolving %s: %v", ref, err)
	}
	return d.Digest.String()
}

// Stop stops the registry now (a registry that is down).
func (r *Registry) Stop(t testing.TB) {
	t.Helper()
	if err := r.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err := <-r.exited
	r.exited <- err // the cleanup waits too
}
