package cmd

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/cli"
	"github.com/bastion-dev/bastion/internal/ids"
	"github.com/bastion-dev/bastion/internal/users"
)

// runUser is the operator's tool for console users, the one the sign-in
// help text points to: list, add and change-by-login.
func runUser(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return cli.UsageError("usage: bastion user list|add|change-by-login [flags]")
	}
	sub, args := args[0], args[1:]
	fs := cli.NewFlagSet("user "+sub, stderr)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster (default: $KUBECONFIG, in-cluster, ~/.kube/config); `bastion dev` prints its own")
	namespace := fs.String("namespace", defaultNamespace(), "the manager's namespace, where password hashes are kept")
	dataDir := fs.String("data-dir", "", "the data dir of a running `bastion dev` (its kubeconfig is used), instead of --kubeconfig")

	switch sub {
	case "list":
		if err := cli.Parse(fs, args); err != nil {
			return err
		}
		store, err := newUserStore(devKubeconfig(*kubeconfig, *dataDir), *namespace)
		if err != nil {
			return err
		}
		return listUsers(stdout, store)
	case "add":
		spec := bastionv1.UserSpec{}
		fs.StringVar(&spec.Username, "login", "", "username (required)")
		fs.StringVar(&spec.Name, "name", "", "display name (required)")
		fs.StringVar(&spec.Email, "email", "", "email (required)")
		fs.BoolVar(&spec.Admin, "admin", false, "make the user an administrator")
		password := passwordFlag(fs)
		if err := cli.Parse(fs, args); err != nil {
			return err
		}
		store, err := newUserStore(devKubeconfig(*kubeconfig, *dataDir), *namespace)
		if err != nil {
			return err
		}
		pw, err := readPassword(*password)
		if err != nil {
			return err
		}
		user, err := store.Create(context.Background(), spec, pw)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "user %s created\n", user.Spec.Username)
		return nil
	case "change-by-login":
		login := fs.String("login", "", "username or email of the user (required)")
		password := passwordFlag(fs)
		if err := cli.Parse(fs, args); err != nil {
			return err
		}
		if *login == "" {
			return cli.UsageError("--login is required")
		}
		store, err := newUserStore(devKubeconfig(*kubeconfig, *dataDir), *namespace)
		if err != nil {
			return err
		}
		ctx := context.Background()
		user, err := store.FindByLogin(ctx, *login)
		if err != nil {
			return err
		}
		pw, err := readPassword(*password)
		if err != nil {
			return err
		}
		if err := store.SetPassword(ctx, user, pw); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "password of %s changed\n", user.Spec.Username)
		return nil
	default:
		return cli.UsageError("unknown user command %q (list, add, change-by-login)", sub)
	}
}

func passwordFlag(fs *flag.FlagSet) *string {
	return fs.String("password", "", `new password; "-" or empty reads one line from standard input (keeps it out of the process list)`)
}

// readPassword returns the flag's value, or a line from standard input.
func readPassword(flagValue string) (string, error) {
	if flagValue != "" && flagValue != "-" {
		return flagValue, nil
	}
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("Password is required")
	}
	return line, nil
}

// devKubeconfig is the kubeconfig to use: --kubeconfig, else the one
// `bastion dev` keeps in its data dir.
func devKubeconfig(kubeconfig, dataDir string) string {
	if kubeconfig == "" && dataDir != "" {
		return filepath.Join(dataDir, "kubeconfig")
	}
	return kubeconfig
}

func newUserStore(kubeconfig, namespace string) (*users.Store, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		cfg, err = config.GetConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("no cluster to talk to: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: newScheme()})
	if err != nil {
		return nil, err
	}
	return &users.Store{Client: c, Namespace: namespace, IDs: &ids.Allocator{Client: c}}, nil
}

func listUsers(w io.Writer, store *users.Store) error {
	all, err := store.List(context.Background())
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "USERNAME\tNAME\tEMAIL\tADMIN")
	for _, u := range all {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%t\n", u.Spec.Username, u.Spec.Name, u.Spec.Email, u.Spec.Admin)
	}
	return tw.Flush()
}
