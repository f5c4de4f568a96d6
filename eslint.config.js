import js from "@eslint/js";
import tseslint from "typescript-eslint";

/**
 * `error instanceof StaleStateError` where the class comes from another @tenxgraph package is
 * false when two copies of that package are loaded (two versions side by side, a bundled
 * copy) or the error crossed a realm: check the error's code instead, with
 * `isTenxgraphError(error, "CODE")` (or the client's `isClientError(error, "CODE")`).
 */
const noInstanceofTenxgraphError = {
  meta: {
    type: "problem",
    docs: {
      description: "Check a tenxgraph error by its code, never by instanceof across packages",
    },
    schema: [],
    messages: {
      byCode:
        "'{{name}}' comes from '{{source}}': check the error's code with " +
        'isTenxgraphError(error, "CODE") (or isClientError), never instanceof across packages.',
    },
  },
  create(context) {
    return {
      "BinaryExpression[operator='instanceof']"(node) {
        const member = node.right.type === "MemberExpression";
        const head = member ? node.right.object : node.right;
        const name = member ? node.right.property.name : node.right.name;
        if (head.type !== "Identifier" || !/Error$/.test(name ?? "")) return;
        let variable;
        for (
          let scope = context.sourceCode.getScope(node);
          scope && !variable;
          scope = scope.upper
        ) {
          variable = scope.set.get(head.name);
        }
        const definition = variable?.defs[0];
        if (definition?.type !== "ImportBinding") return;
        const source = definition.parent.source.value;
        if (typeof source !== "string" || !source.startsWith("@tenxgraph/")) return;
        context.report({ node, messageId: "byCode", data: { name, source } });
      },
    };
  },
};

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", "**/.tenxgraph/**", "bench/results.*"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
    },
  },
  {
    // Everything that imports a tenxgraph package by name; core imports itself by path.
    files: ["**/*.{ts,tsx,js,mjs}"],
    plugins: {
      tenxgraph: { rules: { "no-instanceof-tenxgraph-error": noInstanceofTenxgraphError } },
    },
    rules: { "tenxgraph/no-instanceof-tenxgraph-error": "error" },
  },
);
