package kubeflags

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// DefaultTimeout bounds each request to the apiserver unless --kubeclient-timeout or
// --request-timeout says otherwise (upstream istioctl's default).
const DefaultTimeout = 15 * time.Second

// Flags are the connection flags every command shares: upstream istioctl's -c/--kubeconfig,
// --context, -n/--namespace, --as, --as-group, --as-uid and --kubeclient-timeout, and
// kubectl's --server, --token, --user, --cluster, --certificate-authority,
// --client-certificate, --client-key, --insecure-skip-tls-verify, --tls-server-name and
// --request-timeout, with kubectl's names, help text and meaning.
//
// They sit on client-go's clientcmd loading rules and overrides, the same ones cli-runtime's
// genericclioptions.ConfigFlags fills in, rather than on ConfigFlags itself: linking
// genericclioptions costs every command, offline ones included, ~5.5 MiB max RSS and ~3 ms
// at start-up (it pulls kustomize and its embedded OpenAPI document; docs/connection.md has
// the measurement). A test checks the names, types and help text against ConfigFlags.
type Flags struct {
	Kubeconfig string
	Context    string
	Namespace  string
	As         string
	AsGroups   []string
	AsUID      string
	// Timeout is --kubeclient-timeout; RequestTimeout, when given, wins over it.
	Timeout time.Duration

	Server                string
	Token                 string
	User                  string
	Cluster               string
	CertificateAuthority  string
	ClientCertificate     string
	ClientKey             string
	InsecureSkipTLSVerify bool
	TLSServerName         string
	RequestTimeout        RequestTimeout
}

// RequestTimeout is kubectl's --request-timeout: seconds, or a duration with its unit; "0"
// means no timeout. It remembers whether it was given, so that it wins over
// --kubeclient-timeout only then.
type RequestTimeout struct {
	value string
	set   bool
}

// Set checks the value as kubectl's loader would, so a bad one is a usage error.
func (t *RequestTimeout) Set(s string) error {
	if _, err := clientcmd.ParseTimeout(s); err != nil {
		return errors.New("want a number of seconds, or a number with its unit (e.g. 1s, 2m, 3h)")
	}
	t.value, t.set = s, true
	return nil
}

func (t *RequestTimeout) String() string {
	if !t.set {
		return "0"
	}
	return t.value
}

// Type is what the help shows, as kubectl's.
func (t *RequestTimeout) Type() string { return "string" }

// Given says the flag (or ISTIOCTL_REQUEST_TIMEOUT) was set.
func (t *RequestTimeout) Given() bool { return t.set }

// AddFlags registers the flags on fs. --server has no -s: that is --set's, as upstream's.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&f.Kubeconfig, "kubeconfig", "c", "", "Kubernetes configuration file (default: $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&f.Context, "context", "", "Kubernetes configuration context to use")
	fs.StringVarP(&f.Namespace, "namespace", "n", "", "Kubernetes namespace (default: the context's)")
	fs.StringVar(&f.As, "as", "", "Username to impersonate for the operation")
	fs.StringArrayVar(&f.AsGroups, "as-group", nil, "Group to impersonate for the operation; repeatable")
	fs.StringVar(&f.AsUID, "as-uid", "", "UID to impersonate for the operation")
	fs.DurationVar(&f.Timeout, "kubeclient-timeout", DefaultTimeout, "Kubernetes client timeout per request (--request-timeout wins when both are given)")

	// kubectl's, as cli-runtime words them.
	fs.StringVar(&f.Server, "server", "", "The address and port of the Kubernetes API server")
	fs.StringVar(&f.Token, "token", "", "Bearer token for authentication to the API server")
	fs.StringVar(&f.User, "user", "", "The name of the kubeconfig user to use")
	fs.StringVar(&f.Cluster, "cluster", "", "The name of the kubeconfig cluster to use")
	fs.StringVar(&f.CertificateAuthority, "certificate-authority", "", "Path to a cert file for the certificate authority")
	fs.StringVar(&f.ClientCertificate, "client-certificate", "", "Path to a client certificate file for TLS")
	fs.StringVar(&f.ClientKey, "client-key", "", "Path to a client key file for TLS")
	fs.BoolVar(&f.InsecureSkipTLSVerify, "insecure-skip-tls-verify", false, "If true, the server's certificate will not be checked for validity. This will make your HTTPS connections insecure")
	fs.StringVar(&f.TLSServerName, "tls-server-name", "", "Server name to use for server certificate validation. If it is not provided, the hostname used to contact the server is used")
	fs.Var(&f.RequestTimeout, "request-timeout", "The length of time to wait before giving up on a single server request. Non-zero values should contain a corresponding time unit (e.g. 1s, 2m, 3h). A value of zero means don't timeout requests.")
}

// Loader returns the kubeconfig loader the flags describe: the kubeconfig files kubectl
// reads, with the flags laid over them as kubectl lays its own.
func (f *Flags) Loader() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.Kubeconfig
	o := &clientcmd.ConfigOverrides{CurrentContext: f.Context}
	o.Context.Namespace = f.Namespace
	o.Context.AuthInfo = f.User
	o.Context.Cluster = f.Cluster
	o.AuthInfo.Impersonate = f.As
	o.AuthInfo.ImpersonateGroups = f.AsGroups
	o.AuthInfo.ImpersonateUID = f.AsUID
	o.AuthInfo.Token = f.Token
	o.AuthInfo.ClientCertificate = f.ClientCertificate
	o.AuthInfo.ClientKey = f.ClientKey
	o.ClusterInfo.Server = f.Server
	o.ClusterInfo.CertificateAuthority = f.CertificateAuthority
	o.ClusterInfo.InsecureSkipTLSVerify = f.InsecureSkipTLSVerify
	o.ClusterInfo.TLSServerName = f.TLSServerName
	if f.RequestTimeout.set {
		o.Timeout = f.RequestTimeout.value
	}
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, o)
}

// RESTConfig loads the kubeconfig, lays the flags over it and sets the per-request timeout.
func (f *Flags) RESTConfig() (*rest.Config, error) {
	cfg, err := f.Loader().ClientConfig()
	if err != nil {
		return nil, ExplainConfigError(err)
	}
	if !f.RequestTimeout.set {
		cfg.Timeout = f.Timeout
	}
	return cfg, nil
}

// CurrentNamespace is --namespace, else the context's namespace, else "default".
func (f *Flags) CurrentNamespace() string {
	ns, _, err := f.Loader().Namespace()
	if err != nil || ns == "" {
		return "default"
	}
	return ns
}

// Contexts lists the kubeconfig's context names, sorted; none when there is no kubeconfig.
func (f *Flags) Contexts() []string {
	raw, err := f.Loader().RawConfig()
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(raw.Contexts))
	for name := range raw.Contexts {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// ExplainConfigError turns a kubeconfig loading error into one that says what to do.
func ExplainConfigError(err error) error {
	msg := err.Error()
	switch {
	case clientcmd.IsEmptyConfig(err):
		return errors.New("no kubeconfig found: set --kubeconfig, the KUBECONFIG environment variable or ISTIOCTL_KUBECONFIG, or create ~/.kube/config; or name the cluster with --server (ISTIOCTL_SERVER) and its credentials with ISTIOCTL_TOKEN")
	case strings.Contains(msg, "context") && strings.Contains(msg, "does not exist"):
		return fmt.Errorf("%w: list the contexts with 'kubectl config get-contexts' and pass one with --context", err)
	case errors.Is(err, os.ErrNotExist) && !clientcmd.IsConfigurationInvalid(err):
		return fmt.Errorf("loading the kubeconfig: %w: check --kubeconfig and the KUBECONFIG environment variable", err)
	case clientcmd.IsConfigurationInvalid(err):
		// A user's certificate or key file that is gone, a cluster without a server, ...
		return fmt.Errorf("loading the kubeconfig: %w: fix that context's entries, or pick another with --context", err)
	}
	return fmt.Errorf("loading the kubeconfig: %w", err)
}
