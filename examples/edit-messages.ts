import { END, InMemoryCheckpointer, Message, StateGraph } from "@tenxgraph/core";

// ANSWER edits its draft in place; SUMMARIZE replaces the old summary with a new one.
const app = new StateGraph()
  .addNode("ANSWER", (state) => {
    const draft = state.messages.at(-1)!;
    return { messages: [{ ...draft, content: "Corrected answer" }] }; // an edit
  })
  .addNode("SUMMARIZE", (state) => {
    const oldSummary = state.messages[0]!;
    const summary = `Summary of ${state.messages.length - 1} messages`;
    return { messages: [Message.remove(oldSummary.id), Message.assistant(summary)] };
  })
  .addEdge("ANSWER", "SUMMARIZE")
  .addEdge("SUMMARIZE", END)
  .setEntryPoint("ANSWER")
  .compile({ checkpointer: new InMemoryCheckpointer() });

const input = [Message.assistant("Old summary"), Message.user("Hi"), Message.assistant("Draft")];
const result = await app.invoke({ messages: input }, { threadId: "edits" });
for (const message of result.state.messages) console.log(`${message.role}: ${message.content}`);
// Nothing stored is rewritten: the version ANSWER wrote still holds the old summary.
const history = await app.getStateHistory({ threadId: "edits" });
const answered = history.find((version) => version.node === "ANSWER")!;
const past = await app.getState({ threadId: "edits", version: answered.version });
console.log(`version ${answered.version} still reads: ${past!.values.messages[0]!.content}`);
