// Ported from LangGraph.js's how-to "How to return structured output from the prebuilt ReAct
// agent", published in langchain-ai/langgraphjs as examples/how-tos/react-return-structured-output.ipynb
// (https://langchain-ai.github.io/langgraphjs/how-tos/react-return-structured-output/).
// Its code cells, in order. What changed, and why:
// - imports: `@tenxgraph/models` and `@tenxgraph/core` for `@langchain/langgraph/prebuilt`,
//   `@langchain/core/tools` and `@langchain/openai`;
// - the model is an AI SDK model name (`model: "openai/gpt-4o", temperature: 0`) instead of
//   `llm: new ChatOpenAI({ model: "gpt-4o", temperature: 0 })`;
// - the tool is `tool({ name, description, schema, execute })` instead of `tool(fn, fields)`;
// - a message is `Message.user(text)` (it gets an id) instead of `{ role, content }`;
// - `invoke` answers a RunResult: the state is `response.state`, so `structuredResponse` is
//   `response.state.structuredResponse`;
// - the two notebook cells that both declare `agent` and `response` are one module here, so the
//   second pair is `agentWithPrompt` and `responseWithPrompt`; the notebook shows a cell's last
//   value, here it is printed; the LangSmith settings are left out.
// Run it with OPENAI_API_KEY set (tests point OPENAI_BASE_URL at a scripted server).
import { tool, Message } from "@tenxgraph/core";
import { createReactAgent } from "@tenxgraph/models";
import { z } from "zod";

const weatherTool = tool({
  name: "get_weather",
  description: "Use this to get weather information.",
  schema: z.object({
    city: z.enum(["nyc", "sf"]).describe("The city to get weather for"),
  }),
  execute: async (input): Promise<string> => {
    if (input.city === "nyc") {
      return "It might be cloudy in nyc";
    } else if (input.city === "sf") {
      return "It's always sunny in sf";
    } else {
      throw new Error("Unknown city");
    }
  },
});

const WeatherResponseSchema = z.object({
  conditions: z.string().describe("Weather conditions"),
});

const tools = [weatherTool];

const agent = createReactAgent({
  model: "openai/gpt-4o",
  temperature: 0,
  tools: tools,
  responseFormat: WeatherResponseSchema,
});

const response = await agent.invoke({
  messages: [Message.user("What's the weather in NYC?")],
});

console.log(response.state.structuredResponse);

// Customizing system prompt

const agentWithPrompt = createReactAgent({
  model: "openai/gpt-4o",
  temperature: 0,
  tools: tools,
  responseFormat: {
    prompt: "Always return capitalized weather conditions",
    schema: WeatherResponseSchema,
  },
});

const responseWithPrompt = await agentWithPrompt.invoke({
  messages: [Message.user("What's the weather in NYC?")],
});

console.log(responseWithPrompt.state.structuredResponse);
