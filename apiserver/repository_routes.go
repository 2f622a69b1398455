package apiserver

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/kinds"
)

// repositoryJSON is a repository (api-contract.md), in answers and requests.
type repositoryJSON struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	ProjectID int64  `json:"project_id"`
	GitURL    string `json:"git_url"`
	GitBranch string `json:"git_branch"`
	SSHKeyID  int64  `json:"ssh_key_id"`
	managedJSON
}

// repositoryResource serves /project/{id}/repositories. Members read;
// writes need manageProjectResources.
var repositoryResource = &resource[*bastionv1.Repository, repositoryJSON, repositoryJSON]{
	kind: kinds.Repository, path: "/repositories", param: "repository_id",
	toJSON: (*Server).toRepositoryJSON,
	build: func(s *Server, r *http.Request, req *repositoryJSON, _ *bastionv1.Repository) (func(*bastionv1.Repository) error, error) {
		spec, err := s.repositorySpec(r, *req)
		return func(repo *bastionv1.Repository) error { repo.Spec = spec; return nil }, err
	},
	refs: referencedBy(kinds.Repository),
}

// The URL types of docs/features.md §3.
const (
	urlLocal = "local"
	urlSSH   = "ssh"
)

var (
	// schemeURL is "<scheme>://…"; transportURL is git's "<transport>::…"
	// form, which can run commands (ext::) and is never accepted.
	schemeURL    = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*)://`)
	transportURL = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*::`)
	gitSchemes   = map[string]bool{"ssh": true, "https": true, "file": true, "git": true}
	errBadURL    = badRequest("Incorrect URL")
)

// scpLike reports git's scp-like ssh syntax, [user@]host:path: a colon
// before any slash (else git reads a relative path), a path after it, and
// a host that cannot be taken for an option.
func scpLike(u string) bool {
	colon := strings.IndexByte(u, ':')
	if colon <= 0 || colon == len(u)-1 || strings.Contains(u[:colon], "/") {
		return false
	}
	host := u[:colon]
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		host = host[at+1:]
	}
	return host != "" && !strings.HasPrefix(host, "-") && !strings.HasPrefix(u, "-")
}

// gitURL checks a repository URL by docs/features.md §3 and returns it with its scheme
// in lower case (git matches schemes exactly) and its type: local for a
// leading slash, ssh without a scheme, else the scheme, which must be ssh,
// https, file or git.
func gitURL(raw string) (string, string, error) {
	u := strings.TrimSpace(raw)
	switch {
	case u == "":
		// The repository form's message for an empty URL field.
		return "", "", badRequest("Repository is required")
	case hasSpaceOrControl(u):
		return "", "", errBadURL
	case strings.HasPrefix(u, "/"):
		return u, urlLocal, nil
	}
	m := schemeURL.FindStringSubmatch(u)
	if m == nil {
		if transportURL.MatchString(u) || !scpLike(u) {
			return "", "", errBadURL
		}
		return u, urlSSH, nil
	}
	scheme := strings.ToLower(m[1])
	if !gitSchemes[scheme] {
		return "", "", errBadURL
	}
	u = scheme + u[len(m[1]):]
	parsed, err := url.Parse(u)
	if err != nil || scheme != "file" && parsed.Host == "" || parsed.Host == "" && parsed.Path == "" {
		return "", "", errBadURL
	}
	if strings.HasPrefix(parsed.Hostname(), "-") || strings.HasPrefix(parsed.User.Username(), "-") {
		// ssh://-oProxyCommand=…/r: ssh would read the host or user as an
		// option. git refuses these too; the API says so at once.
		return "", "", errBadURL
	}
	if _, hasPassword := parsed.User.Password(); hasPassword {
		return "", "", badRequest("the URL must not hold a password: put the credentials in a login_password key")
	}
	return u, scheme, nil
}

// hasSpaceOrControl: neither URLs nor branch names hold spaces or control
// characters (a newline in either would split a line of git's output).
func hasSpaceOrControl(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0
}

// gitBranch checks a repository's branch: required unless the URL is
// local, and never something git could read as an option (--upload-pack=)
// or that would split a line.
func gitBranch(raw, urlType string) (string, error) {
	branch := strings.TrimSpace(raw)
	if branch == "" && urlType != urlLocal {
		return "", badRequest("Branch is required")
	}
	if strings.HasPrefix(branch, "-") || hasSpaceOrControl(branch) {
		return "", badRequest("the branch is not a valid git branch name")
	}
	return branch, nil
}

// repositorySpec checks a request by docs/features.md §5 (name, URL, branch unless local, key)
// and returns the Repository's fields.
func (s *Server) repositorySpec(r *http.Request, req repositoryJSON) (bastionv1.RepositorySpec, error) {
	name, err := requiredName(req.Name)
	if err != nil {
		return bastionv1.RepositorySpec{}, err
	}
	gitURL, urlType, err := gitURL(req.GitURL)
	if err != nil {
		return bastionv1.RepositorySpec{}, err
	}
	branch, err := gitBranch(req.GitBranch, urlType)
	if err != nil {
		return bastionv1.RepositorySpec{}, err
	}
	if req.SSHKeyID == 0 {
		return bastionv1.RepositorySpec{}, badRequest("Key is required")
	}
	key, err := s.refTo(r.Context(), projectOf(r), req.SSHKeyID, &corev1.SecretList{}, "ssh_key_id")
	if err != nil {
		return bastionv1.RepositorySpec{}, err
	}
	return bastionv1.RepositorySpec{DisplayName: name, GitURL: gitURL, GitBranch: branch, SSHKeyRef: *key}, nil
}

func (s *Server) toRepositoryJSON(r *http.Request, repo *bastionv1.Repository) (repositoryJSON, error) {
	a := projectOf(r)
	return repositoryJSON{
		ID: idOf(repo), Name: repo.Spec.DisplayName, ProjectID: a.id, GitURL: repo.Spec.GitURL, GitBranch: repo.Spec.GitBranch,
		SSHKeyID: s.refID(r.Context(), a.namespace(), &repo.Spec.SSHKeyRef, secretMetadata()),
	}, nil
}
