import { describe, expect, it } from "vitest";
import { redactConnectionString } from "../../src/store/postgres/redact.js";

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
