import { z } from "zod";
import { messagesField } from "../definition/state-schema.js";

/**
 * LangGraph.js's `MessagesZodState`: a state schema holding only the transcript, to give to
 * `new StateGraph(MessagesZodState)` or to extend with fields of your own
 * (`MessagesZodState.extend({ city: z.string() })`). Its `messages` merges by id
 * (`appendMessages`, LangGraph's `messagesStateReducer`), as in every graph here.
 */
export const MessagesZodState = z.object({ messages: messagesField });

/**
 * LangGraph.js's `MessagesAnnotation`, the same schema under its other name, so
 * `new StateGraph(MessagesAnnotation)` ports as is (`typeof MessagesAnnotation.State` does not:
 * use `z.infer<typeof MessagesAnnotation>` or `BaseState`).
 */
export const MessagesAnnotation = MessagesZodState;
