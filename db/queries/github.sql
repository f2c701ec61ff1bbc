-- name: InsertGitHubAttachment :exec
INSERT INTO github_thread_metadata (thread_id, installation_id, account_id, repo_id, repo_owner, repo_name, number,
    is_pull_request, review_root_id, created_by)
VALUES (@thread_id, @installation_id, @account_id, @repo_id, @repo_owner, @repo_name, @number,
    @is_pull_request, sqlc.narg(review_root_id), @created_by);

-- name: GitHubAttachment :one
SELECT * FROM github_thread_metadata WHERE thread_id = @thread_id;

-- name: ThreadByGitHubConversation :one
-- ThreadByGitHubConversation finds the thread of an issue or PR (root 0)
-- or of one review thread, by the conversation key's index.
SELECT t.* FROM threads t
JOIN github_thread_metadata g ON g.thread_id = t.thread_id
WHERE g.repo_id = @repo_id AND g.number = @number AND coalesce(g.review_root_id, 0) = @review_root::bigint;

-- name: SetGitHubActive :execrows
UPDATE github_thread_metadata SET is_active = @is_active, updated_at = now()
WHERE repo_id = @repo_id AND number = @number AND coalesce(review_root_id, 0) = @review_root::bigint
  AND is_active <> @is_active;

-- name: UpsertGitHubInstallation :exec
-- UpsertGitHubInstallation records an installation (created, or seen on
-- any event): an uninstalled one that comes back is installed again.
INSERT INTO github_installations (installation_id, account_id, account_login)
VALUES (@installation_id, @account_id, @account_login)
ON CONFLICT (installation_id) DO UPDATE
SET account_id = excluded.account_id, account_login = excluded.account_login,
    removed_at = NULL, suspended = false, updated_at = now();

-- name: SetGitHubInstallationSuspended :execrows
UPDATE github_installations SET suspended = @suspended, updated_at = now()
WHERE installation_id = @installation_id;

-- name: RemoveGitHubInstallations :execrows
-- RemoveGitHubInstallations marks an account's installations uninstalled.
UPDATE github_installations SET removed_at = now(), updated_at = now()
WHERE account_id = @account_id AND removed_at IS NULL;

-- name: GitHubInstallationGone :one
-- GitHubInstallationGone says whether an installation was uninstalled or
-- is suspended: its events are acknowledged and dropped.
SELECT coalesce((SELECT removed_at IS NOT NULL OR suspended FROM github_installations
                 WHERE installation_id = @installation_id), false)::boolean;

-- name: GitHubInstallationsOf :many
-- GitHubInstallationsOf is the live installations whose account is of an
-- organisation (linked, or its own), every live one for the operator
-- (''): what a conversation's GitHub tools may read. An installation made
-- before weft heard its installation event is known by its threads (its
-- login taken from a repository's owner). Few rows: a scan.
SELECT installation_id, account_id, account_login FROM (
    SELECT i.installation_id, i.account_id, i.account_login FROM github_installations i
    WHERE i.removed_at IS NULL AND NOT i.suspended
    UNION ALL
    (SELECT DISTINCT ON (g.installation_id) g.installation_id, g.account_id, g.repo_owner
     FROM github_thread_metadata g
     WHERE NOT EXISTS (SELECT 1 FROM github_installations i WHERE i.installation_id = g.installation_id)
     ORDER BY g.installation_id, g.created_at DESC)
) live
WHERE @organisation::text = '' OR tenant_organisation('github', account_id::text) = @organisation::text
ORDER BY installation_id;

-- name: ThreadByGitHubIssue :one
-- ThreadByGitHubIssue finds the thread of an issue or pull request (not
-- one of its review threads) by the names in its URL, within one
-- organisation: a URL names no repository id. A rare command's lookup
-- (/continue), so no index of its own: it scans the GitHub attachments.
SELECT * FROM threads WHERE thread_id = (
    SELECT thread_id FROM github_thread_metadata
    WHERE lower(repo_owner) = lower(@owner::text) AND lower(repo_name) = lower(@repo::text) AND number = @number
      AND review_root_id IS NULL
      AND tenant_organisation('github', account_id::text) = @organisation::text
    ORDER BY updated_at DESC LIMIT 1);
