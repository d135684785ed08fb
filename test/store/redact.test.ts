import { describe, expect, it } from "vitest";
import { hidePasswords, redactConnectionString } from "../../src/store/postgres/redact.js";

describe("redactConnectionString", () => {
  it("hides the password of a URL", () => {
    expect(redactConnectionString("postgres://app:s3cret@db:5432/q")).toBe("postgres://app:***@db:5432/q");
    expect(redactConnectionString("postgres://db/q?password=s3cret")).not.toContain("s3cret");
  });

  it("hides the password of a key=value string", () => {
    expect(redactConnectionString("host=db user=app password=s3cret dbname=q")).toBe("host=db user=app password=*** dbname=q");
  });

  it("hides the password of a URL written without its scheme, or with a slash of it missing, which URL reads otherwise", () => {
    // `app:s3cret@db/ci` is, to URL, the scheme `app:` and a path: no password to hide.
    expect(redactConnectionString("app:s3cret@db.internal:5432/ci")).toBe("app:***@db.internal:5432/ci");
    expect(redactConnectionString("taskq:s3cret@db/ci?sslmode=require&application_name=a@b")).toBe("taskq:***@db/ci?sslmode=require&application_name=a@b");
    expect(redactConnectionString("postgres:/app:s3cret@db/ci")).not.toContain("s3cret");
    expect(redactConnectionString("postgres:app:s3cret@db/ci")).not.toContain("s3cret");
    expect(redactConnectionString("//app:s3cret@db/ci")).toBe("//app:***@db/ci");
    // Not parsed as a URL (a port out of range), with a `/` in the password.
    expect(redactConnectionString("postgres://app:s3/cret@db:99999/ci")).toBe("postgres://app:***@db:99999/ci");
  });

  it("leaves a string without password alone", () => {
    expect(redactConnectionString("postgres://app@[::1]:5432/ci?application_name=a@b")).toBe("postgres://app@[::1]:5432/ci?application_name=a@b");
    expect(redactConnectionString("host=db user=me@corp dbname=q")).toBe("host=db user=me@corp dbname=q");
    expect(redactConnectionString("postgres://postgres@127.0.0.1:5432/test")).toBe("postgres://postgres@127.0.0.1:5432/test");
  });
});

describe("hidePasswords", () => {
  it("hides the password of each PostgreSQL URL and password= in a message, wherever it stands, and leaves the rest as it is", () => {
    expect(hidePasswords('taskq: "postgres://u:s3cret@db/ci" is not a run id')).toBe('taskq: "postgres://u:***@db/ci" is not a run id');
    expect(hidePasswords("postgres://u:s3cret@db/ci:1:1: cannot read file; its folder, postgres://u:s3cret@db, does not exist")).toBe(
      "postgres://u:***@db/ci:1:1: cannot read file; its folder, postgres://u:***@db, does not exist",
    );
    expect(hidePasswords("'postgresql://u:a/b@db/ci' and 'host=db password=s3cret' and postgres://db/ci?password=s3cret&x=1")).toBe(
      "'postgresql://u:***@db/ci' and 'host=db password=***' and postgres://db/ci?password=***&x=1",
    );
    // A password= hidden already, the message's words after it as they are: not "...?password=*** connect failed".
    expect(hidePasswords("cannot open the store postgres://u@db/ci?password=***: connect failed")).toBe("cannot open the store postgres://u@db/ci?password=***: connect failed");
    // One not hidden yet is hidden whole: what follows it up to a space may be its own (a password may end with ":").
    expect(hidePasswords("stores postgres://db/a?password=***: down, postgres://db/b?password=s3cret: down")).toBe("stores postgres://db/a?password=***: down, postgres://db/b?password=*** down");
    // Only that form is taken as hidden already: a password of its own that begins with *** is hidden.
    for (const password of ["***.", "***)", "***;,", "***:x", "****"]) {
      expect(hidePasswords(`taskq: "postgres://u@db/ci?password=${password}" is not a task id`)).toBe('taskq: "postgres://u@db/ci?password=***" is not a task id');
      expect(hidePasswords(`host=db password=${password} dbname=ci`)).toBe("host=db password=*** dbname=ci");
    }
    expect(hidePasswords("postgres://u@db/ci?password=***:&sslmode=require")).toBe("postgres://u@db/ci?password=***&sslmode=require");
    // No password: as it is, a host's port too.
    for (const text of ["postgres://u@db:5432/ci", "postgres://db/ci", 'ci.yaml:3:5: task "a": mail me@corp.com', "password=*** already", "put it in the URL of --store (postgres://USER:PASSWORD@HOST/DB)"]) expect(hidePasswords(text)).toBe(text);
  });
});
