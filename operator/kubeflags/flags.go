// Package kubeflags holds the kubeconfig flags every command shares and how they load a
// client configuration. It is its own package so that the command layer can register and
// read them without reaching the rest of the cluster access (operator/kube).
package kubeflags

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// DefaultTimeout bounds each request to the apiserver unless --kubeclient-timeout says otherwise.
const DefaultTimeout = 15 * time.Second

// Flags are the kubeconfig flags every command shares, with upstream istioctl's names:
// -c/--kubeconfig, --context, -n/--namespace, --as, --as-group, --as-uid and
// --kubeclient-timeout.
//
// They sit directly on client-go's clientcmd (the loading rules and overrides kubectl and
// cli-runtime use) rather than on cli-runtime's ConfigFlags: linking genericclioptions
// costs every istioctl command ~9 ms and ~40 MiB RSS at start-up (it pulls kustomize and an
// embedded OpenAPI document), measured with hack/benchcmp, which alone would break the
// offline commands' speed target.
type Flags struct {
	Kubeconfig string
	Context    string
	Namespace  string
	As         string
	AsGroups   []string
	AsUID      string
	Timeout    time.Duration
}

// AddFlags registers the flags on fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&f.Kubeconfig, "kubeconfig", "c", "", "Kubernetes configuration file (default: $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&f.Context, "context", "", "Kubernetes configuration context to use")
	fs.StringVarP(&f.Namespace, "namespace", "n", "", "Kubernetes namespace (default: the context's)")
	fs.StringVar(&f.As, "as", "", "Username to impersonate for the operation")
	fs.StringArrayVar(&f.AsGroups, "as-group", nil, "Group to impersonate for the operation; repeatable")
	fs.StringVar(&f.AsUID, "as-uid", "", "UID to impersonate for the operation")
	fs.DurationVar(&f.Timeout, "kubeclient-timeout", DefaultTimeout, "Kubernetes client timeout per request")
}

// Loader returns the kubeconfig loader the flags describe.
func (f *Flags) Loader() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: f.Context}
	overrides.Context.Namespace = f.Namespace
	overrides.AuthInfo.Impersonate = f.As
	overrides.AuthInfo.ImpersonateGroups = f.AsGroups
	overrides.AuthInfo.ImpersonateUID = f.AsUID
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
}

// RESTConfig loads the kubeconfig and applies the timeout.
func (f *Flags) RESTConfig() (*rest.Config, error) {
	cfg, err := f.Loader().ClientConfig()
	if err != nil {
		return nil, ExplainConfigError(err)
	}
	cfg.Timeout = f.Timeout
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

// ExplainConfigError turns a kubeconfig loading error into one that says what to do.
func ExplainConfigError(err error) error {
	msg := err.Error()
	switch {
	case clientcmd.IsEmptyConfig(err):
		return errors.New("no kubeconfig found: set --kubeconfig, the KUBECONFIG environment variable or ISTIOCTL_KUBECONFIG, or create ~/.kube/config")
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
