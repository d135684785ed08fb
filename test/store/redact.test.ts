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

  it("leaves a string without password alone", () => {
    expect(redactConnectionString("postgres://postgres@127.0.0.1:5432/test")).toBe("postgres://postgres@127.0.0.1:5432/test");
  });
});
