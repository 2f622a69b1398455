package v1alpha1

// Keys are core Secrets, not a custom kind: private keys and passwords then
// live only where Kubernetes keeps secrets, RBAC on Secrets guards them, and
// external-secrets or sealed-secrets can supply them. A Secret is a Bastion
// key when it carries LabelKeyType.

// KeyType is the kind of credential a key holds (docs/features.md §3).
type KeyType string

// The key types of docs/features.md §3, and the Secret type each is stored as.
const (
	// KeyTypeSSH is a private key (Secret type kubernetes.io/ssh-auth, data
	// ssh-privatekey, plus KeyLogin and KeyPassphrase).
	KeyTypeSSH KeyType = "ssh"
	// KeyTypeLoginPassword is a login and password (Secret type
	// kubernetes.io/basic-auth, data username and password).
	KeyTypeLoginPassword KeyType = "login_password"
	// KeyTypeNone holds nothing (Secret type Opaque).
	KeyTypeNone KeyType = "none"
)

const (
	// LabelKeyType marks a Secret as a Bastion key and says its KeyType.
	LabelKeyType = "automation.bastion.dev/key-type"
	// AnnotationDisplayName holds the user's name for an object whose
	// metadata.name cannot carry it (keys).
	AnnotationDisplayName = "automation.bastion.dev/display-name"

	// KeyLogin is the login of an ssh key (the basic-auth Secret's
	// "username" serves login_password keys).
	KeyLogin = "username"
	// KeyPassword is the password of a login_password key.
	KeyPassword = "password"
	// KeyPrivateKey is the private key of an ssh key.
	KeyPrivateKey = "ssh-privatekey"
	// KeyPassphrase is the passphrase of an ssh key's private key.
	KeyPassphrase = "passphrase"
)
