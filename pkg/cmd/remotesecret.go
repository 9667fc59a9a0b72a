package cmd

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/pkg/printer"
)

// envAnnotation on a flag names the ISTIOCTL_* variable (and config file key) it reads
// instead of its own name's; an empty list means it reads none (applyConfig).
const envAnnotation = "istioctl-env"

// CreateRemoteSecretCommand is create-remote-secret: flags into an action.CreateRemoteSecret.
type CreateRemoteSecretCommand struct {
	Action      action.CreateRemoteSecret
	Globals     *Globals
	Out, ErrOut io.Writer
	// lockFlags: --apply-to writes into that cluster under its cluster lock.
	lockFlags
}

func newCreateRemoteSecretCommand(g *Globals) *cobra.Command {
	a := &CreateRemoteSecretCommand{Globals: g}
	r := &a.Action
	r.AuthPluginConfig = map[string]string{}
	cmd := &cobra.Command{
		Use:   "create-remote-secret",
		Short: "Create a secret with credentials to allow Istio to access remote Kubernetes apiservers",
		Long: `Prints a Secret holding a kubeconfig for this cluster (the one --context names): applied to
another cluster's istio namespace, it lets that cluster's istiod read this one. The Secret is
upstream's: istio-remote-secret-<name> (or istio-kubeconfig with --type config), label
istio/multiCluster=true, annotation networking.istio.io/cluster=<name>, in the istio namespace
(-n to choose another; the context's namespace is never used: istiod reads only its own).

With --apply-to CONTEXT the Secret is written into that cluster instead of printed, with a token
of its own; running it again rotates that token: a new one, the Secret updated, then the old one
deleted. The credentials are never printed then.

--server and --tls-server-name are what the Secret's kubeconfig says (upstream's meaning); the
cluster istioctl reads is named by the kubeconfig and --context, or by --kube-server and
--kube-tls-server-name (the global --server and --tls-server-name of the other commands;
ISTIOCTL_SERVER and ISTIOCTL_TLS_SERVER_NAME set those).`,
		Example: `  # Create a secret to access cluster c0's apiserver and install it in cluster c1.
  istioctl --kubeconfig=c0.yaml create-remote-secret --name c0 \
    | kubectl --kubeconfig=c1.yaml apply -f -

  # The same, written by istioctl into context c1 of the kubeconfig; again to rotate the token
  istioctl --context c0 create-remote-secret --name c0 --apply-to c1

  # Create a secret access a remote cluster with an auth plugin
  istioctl --kubeconfig=c0.yaml create-remote-secret --name c0 --auth-type=plugin --auth-plugin-name=gcp \
    | kubectl --kubeconfig=c1.yaml apply -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.Out, a.ErrOut = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return a.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&r.Name, "name", "", "Name of the local cluster whose credentials are stored in the secret. If a name is not specified the kube-system namespace's UUID of the local cluster will be used.")
	f.StringVar(&r.Type, "type", action.SecretTypeRemote, "Type of the generated secret. supported values = [remote config]")
	f.StringVar(&r.ServiceAccount, "service-account", "", `Create a secret with this service account's credentials. Default value is "istio-reader-service-account" if --type is "remote", "istiod" if --type is "config".`)
	f.BoolVar(&r.CreateServiceAccount, "create-service-account", true, "If true, the service account needed for creating the remote secret will be created if it doesn't exist.")
	f.StringVar(&r.AuthType, "auth-type", action.AuthBearerToken, "Type of authentication to use. supported values = [bearer-token plugin]")
	f.StringVar(&r.AuthPluginName, "auth-plugin-name", "", "Authenticator plug-in name. --auth-type=plugin must be set with this option")
	f.StringToStringVar(&r.AuthPluginConfig, "auth-plugin-config", map[string]string{}, "Authenticator plug-in configuration. --auth-type=plugin must be set with this option")
	f.StringVar(&r.Server, "server", "", "The address and port of the Kubernetes API server written into the secret (default: the one istioctl reaches this cluster at)")
	f.StringVar(&r.TLSServerName, "tls-server-name", "", "The server name that should be validated by kube-client during establishing TLS connection with kube-apiserver.")
	f.StringVar(&r.SecretName, "secret-name", "", "The name of the specific secret to use from the service-account. Needed when there are multiple secrets in the service account.")
	f.StringVarP(&r.ManifestsDir, "manifests", "d", "", "A directory of charts to render the reader ServiceAccount and its RBAC from (default: the embedded ones)")
	f.StringVar(&r.ApplyTo, "apply-to", "", "Write the secret into the cluster of this kubeconfig context instead of printing it (and rotate its token when it is there already)")
	a.lockFlags.add(f)
	// The connection's --server and --tls-server-name, under the names they have here.
	f.StringVar(&g.Kube.Server, "kube-server", "", "The address and port of the Kubernetes API server to read this cluster from (the global --server)")
	f.StringVar(&g.Kube.TLSServerName, "kube-tls-server-name", "", "Server name to check this cluster's apiserver certificate against (the global --tls-server-name)")
	setEnv(f, "kube-server", "server")
	setEnv(f, "kube-tls-server-name", "tls-server-name")
	setEnv(f, "server")
	setEnv(f, "tls-server-name")
	return cmd
}

// setEnv makes flag name read ISTIOCTL_<KEY> and the config file's key instead of its own
// name's, or nothing without a key.
func setEnv(f *pflag.FlagSet, name string, key ...string) {
	if err := f.SetAnnotation(name, envAnnotation, key); err != nil {
		panic(err)
	}
}

// Run plans, creates what the reader lacks, and prints the Secret or, with --apply-to,
// what it wrote.
func (a *CreateRemoteSecretCommand) Run(ctx context.Context) error {
	r := &a.Action
	r.Config = a.Globals.writerConfig(a.ErrOut, "istioctl create-remote-secret", a.lockFlags)
	plan, err := r.Plan(ctx)
	if err != nil {
		return err
	}
	for _, w := range plan.Warnings {
		printer.Warnings(a.ErrOut)(w)
	}
	if len(plan.Create) > 0 {
		printer.Line(a.ErrOut, fmt.Sprintf("Creating the reader identity in %s: %s", plan.ServiceAccount, printer.Join(plan.Create)))
	}
	res, err := r.Run(ctx, plan)
	if res != nil {
		for _, n := range res.Notes {
			printer.Line(a.ErrOut, "note: "+n)
		}
	}
	if res != nil && r.ApplyTo != "" {
		printer.RemoteSecretApplied(a.Out, &printer.SecretApplied{Secret: res.Secret, Context: res.Context, Identity: res.Identity,
			Created: res.Created, ClusterID: plan.ClusterID, Server: plan.Server, TokenKind: res.Token.Kind,
			TokenSecret: res.Token.Secret, Expires: res.Token.Expires, Deleted: res.Deleted, Kept: res.Kept})
	}
	if err != nil {
		return err
	}
	if r.ApplyTo == "" {
		_, err = a.Out.Write(res.YAML)
	}
	return err
}
